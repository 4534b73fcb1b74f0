"""Alignment assets: citation_captures, citation_existence, payload_texts,
passage_checks — every citation tied to the page as it was, L1 existence and L2 passages."""

import dagster as dg
import pyarrow.compute as pc

from assets._metadata import count_by, write_table
from citeaudit import codebook, config, parquet_io
from citeaudit.alignment import align, passages, payload_text, soft404
from pipelines.partitions import date_codebook, judged_partition
from pipelines.resources import PathsResource


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
    citations = parquet_io.read_partition(paths.derived, "citations", day)
    answers = parquet_io.read_partition(paths.derived, "answers", day)
    table = align.align(citations, answers, paths.derived, book,
                        replay_prefix=config.load(paths.raw).replay.link_prefix())
    issues = count_by(table.filter(pc.is_valid(table.column("resolution_issue"))),
                      "resolution_issue")
    return dg.MaterializeResult(metadata=write_table(
        table, paths.derived, "citation_captures", part,
        **{f"issue_{k}": v for k, v in issues.items()}))


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
    texts = parquet_io.read_partition(paths.derived, "payload_texts", part)
    checks = soft404.page_checks(aligned, texts, align.probes_for(aligned, paths.raw))
    table = align.existence(aligned, checks)
    return dg.MaterializeResult(metadata=write_table(
        table, paths.derived, "citation_existence", part,
        **{f"verdict_{k}": v for k, v in count_by(table, "verdict").items()}))


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
    aligned = parquet_io.read_partition(paths.derived, "citation_captures", part)
    table = payload_text.extract_payloads(aligned, paths.raw)
    errors = table.num_rows - pc.sum(pc.is_null(table.column("error"))).as_py() \
        if table.num_rows else 0
    return dg.MaterializeResult(metadata=write_table(
        table, paths.derived, "payload_texts", part, with_error=errors))


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
    citations = parquet_io.read_partition(paths.derived, "citations", day)
    aligned = parquet_io.read_partition(paths.derived, "citation_captures", part)
    texts = parquet_io.read_partition(paths.derived, "payload_texts", part)
    existence = parquet_io.read_partition(paths.derived, "citation_existence", part)
    table = passages.check(citations, aligned, texts, existence=existence)
    return dg.MaterializeResult(metadata=write_table(
        table, paths.derived, "passage_checks", part,
        **{f"verdict_{k}": v for k, v in count_by(table, "verdict").items()}))
