"""Archive assets: the live crawl of a day's cited pages (``fetched_captures``, ``fetch_log``)
and the capture index of every WARC/ARC record of one date (``captures``)."""

import dagster as dg
import pyarrow as pa

from assets._metadata import count_by, write_batches, write_table
from citeaudit import config, parquet_io
from citeaudit.archive import capture as crawl
from citeaudit.archive.capture import fetched_files, file_origin, is_fetched_file, window_warnings
from citeaudit.archive.index import (
    CAPTURES_TABLE_SCHEMA,
    ROW_GROUP_ROWS,
    index_paths,
    streamed_index,
    with_origin,
)
from citeaudit.layout import warc_files
from pipelines.partitions import observation_date
from pipelines.resources import PathsResource


@dg.multi_asset(
    specs=[
        dg.AssetSpec(
            "fetched_captures", deps=["citations", "answers"],
            description=(
                "The capture index of the WARCs citeaudit's own crawl wrote for the date's "
                "cited pages (warc/<crawl_date>/citeaudit-<date>-<seq>.warc.gz) and the "
                "captures it copied from web archives (...-archive-<name>.warc.gz, origin "
                "archive:<name>). The crawl runs only when citeaudit.yaml enables fetch:, the "
                "archive lookup only when it lists archives: (both off by default)."),
        ),
        dg.AssetSpec(
            "fetch_log", deps=["citations"],
            description="One row per fetch attempt or refusal of the date's crawls: URL, "
                        "outcome, HTTP status, bytes, WARC file and offset.",
        ),
    ],
    partitions_def=observation_date,
)
def fetch_cited_pages(context: dg.AssetExecutionContext, paths: PathsResource):
    """Crawl the date's cited pages when fetching is enabled; index what was fetched."""
    date = context.partition_key
    cfg = config.load(paths.raw)
    settings = cfg.fetch
    crawled = False
    day = {"observation_date": date}
    citations = parquet_io.read_optional(paths.derived, "citations", day)
    answers = parquet_io.read_optional(paths.derived, "answers", day)
    if (settings.enabled or cfg.archives) and citations is not None and answers is not None:
        for line in window_warnings(paths.raw, settings):
            context.log.warning(line)
        result = crawl.archive_date(paths.raw, date, citations, answers, settings,
                                    archives=cfg.archives, live=settings.enabled)
        crawled = True
        context.log.info(f"fetch {date}: " + ", ".join(
            f"{k} {v}" for k, v in count_by(result.log, "outcome").items()))
    files = fetched_files(paths.raw, date)
    table = pa.concat_tables([CAPTURES_TABLE_SCHEMA.empty_table()] + [
        with_origin(index_paths([(f, f.relative_to(paths.raw).as_posix())], workers=1),
                    file_origin(f)) for f in files])
    yield dg.MaterializeResult(asset_key="fetched_captures", metadata=write_table(
        table, paths.derived, "fetched_captures", day, warc_files=len(files), crawled=crawled))
    log = crawl.read_logs(paths.raw, date)
    yield dg.MaterializeResult(asset_key="fetch_log", metadata=write_table(
        log, paths.derived, "fetch_log", day,
        **{f"outcome_{k}": v for k, v in count_by(log, "outcome").items()}))


@dg.asset(
    partitions_def=observation_date,
    deps=["fetched_captures"],
    description=(
        "One row per WARC/ARC record of interest: the supplied WARCs under warc/<crawl_date>/ "
        "and the fetched WARCs of that date (origin supplied/fetched): offsets, SURT key, "
        "status, redirect target, digests (declared and verified), revisit targets, and a reason "
        "for every unreadable or truncated record."
    ),
)
def captures(context: dg.AssetExecutionContext, paths: PathsResource) -> dg.MaterializeResult:
    """Index the date's supplied WARC files (several in parallel) and add the fetched ones.

    Streamed: workers write their rows to temporary part files and the sorted partition is
    written from them in row groups, so memory does not grow with the night's WARCs.
    """
    date = context.partition_key
    files = [f for f in warc_files(paths.raw, date) if not is_fetched_file(f)]
    fetched = parquet_io.read_optional(paths.derived, "fetched_captures",
                                       {"observation_date": date})
    runs = [fetched.to_batches()] if fetched is not None and fetched.num_rows else []
    with streamed_index([(f, f.relative_to(paths.raw).as_posix()) for f in files],
                        origin="supplied", sorted_runs=runs) as (batches, summary):
        meta = write_batches(
            batches, CAPTURES_TABLE_SCHEMA, paths.derived, "captures", {"crawl_date": date},
            row_group_rows=ROW_GROUP_ROWS, warc_files=len(files), records_with_error=None,
            fetched_records=fetched.num_rows if fetched is not None else 0)
    # the summary is complete once the batches are written: its count replaces the placeholder
    meta["records_with_error"] = dg.MetadataValue.text(str(summary.records_with_error))
    return dg.MaterializeResult(metadata=meta)
