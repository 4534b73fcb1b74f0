"""Alignment assets: citation_captures, citation_existence, payload_texts,
passage_checks — every citation tied to the page as it was, L1 existence and L2 passages."""

import dagster as dg
import pyarrow as pa
import pyarrow.compute as pc

from assets._metadata import count_by, remember_key, reuse_key, reuse_other_codebook, write_table
from citeaudit import codebook, config, parquet_io, storage
from citeaudit.alignment import align, passages, payload_text, soft404
from pipelines.partitions import date_codebook, judged_partition
from pipelines.resources import PathsResource


def _read_columns(paths: PathsResource, asset: str, where: dict[str, str],
                  columns: list[str]) -> pa.Table:
    """Some columns of one partition (:func:`parquet_io.read_partition`'s checks, fewer
    bytes read and held)."""
    path = parquet_io.partition_dir(paths.derived, asset, where) / parquet_io.DATA_FILE
    if not storage.is_file(path):
        parquet_io.read_partition(paths.derived, asset, where)  # raises, naming the partition
    return parquet_io.read_table(path, columns=columns)


@dg.asset(
    partitions_def=date_codebook,
    deps=["citations", "answers", "captures"],
    description=(
        "Per citation: canonical key, reference time, the capture nearest it inside the "
        "codebook window (ASOF both sides), redirects followed (≤5 hops, loops detected), "
        "revisits resolved, drift in seconds and the reason when nothing usable was found; "
        "a pywb replay link of the final capture when citeaudit.yaml sets replay.base_url."
    ),
)
def citation_captures(context: dg.AssetExecutionContext, paths: PathsResource
                      ) -> dg.MaterializeResult:
    """Align the date's citations with the captures of the crawl dates their windows touch."""
    part = judged_partition(context.partition_key)
    day = {"observation_date": part["observation_date"]}
    book = codebook.load_version(paths.raw, part["codebook"])
    replay = config.load(paths.raw).replay.link_prefix()
    # the captures of every crawl date (the windows reach back, L1 `changed` reads the newest)
    key = reuse_key(paths.derived, "citation_captures", {"citations": day, "answers": day},
                    {"window": book.alignment_window, "tracking": book.tracking_params,
                     "replay": replay}, files=align.capture_files(paths.derived))
    reused = reuse_other_codebook(paths.derived, "citation_captures", part, key)
    if reused is not None:
        return dg.MaterializeResult(metadata=reused)
    # only the columns the alignment reads (the answers' texts and the citations' quotes and
    # metadata would be most of the step's memory on a large day)
    citations = _read_columns(paths, "citations", day, align.CITATION_COLUMNS)
    answers = _read_columns(paths, "answers", day, align.ANSWER_COLUMNS)
    table = align.align(citations, answers, paths.derived, book, replay_prefix=replay)
    del citations, answers
    issues = count_by(table.filter(pc.is_valid(table.column("resolution_issue"))),
                      "resolution_issue")
    meta = write_table(table, paths.derived, "citation_captures", part,
                       **{f"issue_{k}": v for k, v in issues.items()})
    remember_key(paths.derived, "citation_captures", part, key)
    return dg.MaterializeResult(metadata=meta)


@dg.asset(
    partitions_def=date_codebook,
    deps=["citation_captures", "payload_texts"],
    description=(
        "L1 per citation: pass, dead (incl. soft-404s on strong evidence), changed or "
        "unresolved (incl. consent, login, pay walls and bot challenges), with a reason, the "
        "drift, the soft-404 evidence or flag and the capture fidelity."
    ),
)
def citation_existence(context: dg.AssetExecutionContext, paths: PathsResource
                       ) -> dg.MaterializeResult:
    """Classify each aligned citation (SQL) after the page checks (walls, soft-404s against
    the crawl's probes); unresolved is never pass or dead."""
    part = judged_partition(context.partition_key)
    aligned = parquet_io.read_partition(paths.derived, "citation_captures", part)
    probes = align.probes_for(aligned, paths.raw)
    # the probes come from the raw fetch logs: they are part of what the verdicts are made of
    key = reuse_key(paths.derived, "citation_existence",
                    {"citation_captures": part, "payload_texts": part}, {"probes": probes})
    reused = reuse_other_codebook(paths.derived, "citation_existence", part, key)
    if reused is not None:
        return dg.MaterializeResult(metadata=reused)
    texts = parquet_io.read_partition(paths.derived, "payload_texts", part)
    checks = soft404.page_checks(aligned, texts, probes)
    table = align.existence(aligned, checks)
    meta = write_table(table, paths.derived, "citation_existence", part,
                       **{f"verdict_{k}": v for k, v in count_by(table, "verdict").items()})
    remember_key(paths.derived, "citation_existence", part, key)
    return dg.MaterializeResult(metadata=meta)


@dg.asset(
    partitions_def=date_codebook,
    deps=["citation_captures"],
    description=(
        "One row per distinct payload of an aligned capture: its text (HTML to text), the "
        "charset used and the extractor, or the error that left it without text."
    ),
)
def payload_texts(context: dg.AssetExecutionContext, paths: PathsResource
                  ) -> dg.MaterializeResult:
    """Read each distinct final payload once from its WARC and extract its text."""
    part = judged_partition(context.partition_key)
    # the payloads are read at the offsets, and checked against the digests, the aligned
    # captures name: the same citation_captures file reads the same payloads
    key = reuse_key(paths.derived, "payload_texts", {"citation_captures": part})
    reused = reuse_other_codebook(paths.derived, "payload_texts", part, key)
    if reused is not None:
        return dg.MaterializeResult(metadata=reused)
    aligned = parquet_io.read_partition(paths.derived, "citation_captures", part)
    table = payload_text.extract_payloads(aligned, paths.raw)
    errors = table.num_rows - pc.sum(pc.is_null(table.column("error"))).as_py() \
        if table.num_rows else 0
    meta = write_table(table, paths.derived, "payload_texts", part, with_error=errors)
    remember_key(paths.derived, "payload_texts", part, key)
    return dg.MaterializeResult(metadata=meta)


@dg.asset(
    partitions_def=date_codebook,
    deps=["citations", "citation_captures", "payload_texts", "citation_existence"],
    description=(
        "L2 mechanical per quoted citation: located (at its chunk offset), shifted, "
        "normalized, absent or unresolved, with the matched offsets."
    ),
)
def passage_checks(context: dg.AssetExecutionContext, paths: PathsResource
                   ) -> dg.MaterializeResult:
    """Look for each cited quote in the aligned capture's text (SQL)."""
    part = judged_partition(context.partition_key)
    day = {"observation_date": part["observation_date"]}
    key = reuse_key(paths.derived, "passage_checks",
                    {"citations": day, "citation_captures": part, "payload_texts": part,
                     "citation_existence": part})
    reused = reuse_other_codebook(paths.derived, "passage_checks", part, key)
    if reused is not None:
        return dg.MaterializeResult(metadata=reused)
    citations = parquet_io.read_partition(paths.derived, "citations", day)
    aligned = parquet_io.read_partition(paths.derived, "citation_captures", part)
    texts = parquet_io.read_partition(paths.derived, "payload_texts", part)
    existence = parquet_io.read_partition(paths.derived, "citation_existence", part)
    table = passages.check(citations, aligned, texts, existence=existence)
    meta = write_table(table, paths.derived, "passage_checks", part,
                       **{f"verdict_{k}": v for k, v in count_by(table, "verdict").items()})
    remember_key(paths.derived, "passage_checks", part, key)
    return dg.MaterializeResult(metadata=meta)
