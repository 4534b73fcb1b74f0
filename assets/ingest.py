"""Answers ingestion assets: answers, claims, citations and rejected_inputs for one date."""

import dagster as dg
import pyarrow as pa

from assets._metadata import write_table
from citeaudit import duck
from citeaudit.ingest import answers
from pipelines.partitions import observation_date
from pipelines.resources import PathsResource

# Above this share of rejected lines a date is suspicious (a broken exporter, a schema change).
REJECTED_SHARE_WARN = 0.05

INGEST_TABLES = ("answers", "claims", "citations", "rejected_inputs")


@dg.multi_asset(
    specs=[
        dg.AssetSpec("answers", description="One row per accepted answer."),
        dg.AssetSpec("claims", description="One row per claim, in order."),
        dg.AssetSpec("citations", description="One row per citation."),
        dg.AssetSpec(
            "rejected_inputs",
            description="One row per defect of a rejected input line: file, line, field, reason.",
        ),
    ],
    partitions_def=observation_date,
    check_specs=[
        dg.AssetCheckSpec(
            "unique_ids", asset="answers", description="answer, claim, citation ids unique"
        ),
        dg.AssetCheckSpec(
            "no_orphans", asset="claims", description="every claim and citation has its parent"
        ),
        dg.AssetCheckSpec(
            "rejected_share",
            asset="rejected_inputs",
            description=f"rejected lines under {REJECTED_SHARE_WARN:.0%} of the lines (WARN)",
        ),
    ],
)
def ingest_answers(context: dg.AssetExecutionContext, paths: PathsResource):
    """Read ``answers/<date>/*.jsonl``, validate every line in SQL, write the four tables."""
    date = context.partition_key
    files = answers.answer_files(paths.raw, date)
    result = answers.ingest_files(files, paths.raw)
    rejected = pa.concat_tables([result.rejected, answers.import_rejections(paths.raw, date)])
    tables = {
        "answers": result.answers,
        "claims": result.claims,
        "citations": result.citations,
        "rejected_inputs": rejected.sort_by(
            [(k, "ascending") for k in ("source_file", "source_line", "field", "reason")]),
    }
    for name in INGEST_TABLES:
        yield dg.MaterializeResult(asset_key=name, metadata=write_table(
            tables[name], paths.derived, name, {"observation_date": date},
            input_files=len(files)))

    con = duck.connect()
    for name, table in tables.items():
        con.register(name, table)
    counts = duck.query(con, "ingest/check_contract").to_pylist()[0]
    duplicates = (
        counts["duplicate_answer_ids"]
        + counts["duplicate_claim_ids"]
        + counts["duplicate_citation_ids"]
    )
    yield dg.AssetCheckResult(
        asset_key="answers", check_name="unique_ids", passed=duplicates == 0, metadata=counts
    )
    orphans = counts["orphan_claims"] + counts["orphan_citations"]
    yield dg.AssetCheckResult(
        asset_key="claims", check_name="no_orphans", passed=orphans == 0, metadata=counts
    )
    total = counts["rejected_lines"] + counts["accepted_lines"]
    share = counts["rejected_lines"] / total if total else 0.0
    yield dg.AssetCheckResult(
        asset_key="rejected_inputs",
        check_name="rejected_share",
        passed=share <= REJECTED_SHARE_WARN,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={"rejected_share": share, **counts},
    )


@dg.asset(
    description=(
        "One row per file or folder under the raw root that the pipeline does not read: path, "
        "file/folder, reason (wrong place, name or suffix, not an archive by its first bytes, "
        "unreadable) and what was expected. `citeaudit check` prints the same rows."
    ),
)
def ignored_inputs(paths: PathsResource) -> dg.MaterializeResult:
    """Walk the raw folder and write the file-level table of what is not read."""
    from citeaudit.ingest import raw_check

    return dg.MaterializeResult(
        metadata=write_table(raw_check.ignored_inputs(paths.raw), paths.derived, "ignored_inputs"))
