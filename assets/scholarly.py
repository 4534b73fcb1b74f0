"""Scholarly metadata, the three-layer audit's L3 metadata layer (docs/references.md):
scholarly_records, metadata_checks, claim_independence.

scholarly_records is the registry cache, written per judged partition (the records that
partition's citations used) and read back as the union of every partition on disk
(``citeaudit.scholarly.cache``): a DOI already answered is not fetched again until its answer
is older than the codebook's ``refresh_days`` at the end of the observed day (not the wall
clock: a rerun reads what its first run read), so a nightly run makes one request per new DOI,
and a second run, or another codebook, makes none; ``citeaudit run --refresh-registries`` asks
again for everything. DOIs go to each registry in lists (one request
per up to 50 / 100 DOIs), so ``requests_made`` is smaller than ``lookups_fetched``.
"""

from collections import Counter

import dagster as dg
import pyarrow.compute as pc

from assets._metadata import remember_key, reuse_key, reuse_other_codebook, write_table
from citeaudit import codebook, parquet_io
from citeaudit.scholarly import cache, check, compare, endpoints
from pipelines.overlap import REGISTRY_PRIORITY
from pipelines.partitions import date_codebook, judged_partition
from pipelines.resources import CrossrefResource, OpenAlexResource, PathsResource


@dg.multi_asset(
    specs=[
        dg.AssetSpec(
            "scholarly_records",
            deps=["citations"],
            description="Registry cache: per (registry, DOI or search) the HTTP outcome, fetch "
            "time and raw JSON (union of partitions; newest answered record wins).",
        ),
        dg.AssetSpec(
            "metadata_checks",
            deps=["citations"],
            description="Per citation with a DOI or scholarly metadata: consistent, mismatch "
            "(fields), not_found, unmatched or unresolved; retraction flag; registry agreement.",
        ),
    ],
    partitions_def=date_codebook,
    pool="scholarly_registries",  # Crossref and OpenAlex: bounded across workers (deploy/)
    # First among the steps ready at once: with two steps at a time (pipelines.overlap) the
    # registry wait holds one slot while the CPU steps take the other.
    op_tags={"dagster/priority": REGISTRY_PRIORITY},
)
def check_metadata(
    context: dg.AssetExecutionContext,
    paths: PathsResource,
    crossref: CrossrefResource,
    openalex: OpenAlexResource,
):
    """Look DOIs (or titles) up in Crossref and OpenAlex through the cache and compare."""
    part = judged_partition(context.partition_key)
    book = codebook.load_version(paths.raw, part["codebook"])
    citations = parquet_io.read_partition(
        paths.derived, "citations", {"observation_date": part["observation_date"]}
    )
    cached = cache.read_cache(paths.derived)
    settings = (crossref.registry_settings(), openalex.registry_settings())
    with endpoints.open_clients(paths.raw, *settings) as opened:
        store = cache.RecordStore(
            cached, opened.clients, book.scholarly.refresh_days,
            as_of=cache.end_of_day(part["observation_date"]),
            refreshed_at=cache.refreshed_at(paths.derived),
        )
        checks = check.check_citations(
            citations, store, compare.Thresholds.from_codebook(book.scholarly)
        )
        wire = opened.stats()
        modes = opened.modes
    records = store.table()
    outcomes = Counter(checks.column("verdict").to_pylist())
    retracted = pc.sum(pc.fill_null(checks.column("retracted"), False)).as_py() or 0
    extra = {
        "citations_checked": checks.num_rows,
        "requests_made": store.counts["requests"],
        "lookups_fetched": store.counts["lookups_fetched"],
        "batch_unanswered": store.counts["batch_unanswered"],
        "records_from_cache": store.counts["from_cache"],
        "oldest_answer_days": pc.max(checks.column("answer_age_days")).as_py(),
        "stale_used_after_error": store.counts["stale_used_after_error"],
        "registries": ", ".join(f"{k}={v}" for k, v in sorted(modes.items())),
        **wire,
    }
    yield dg.MaterializeResult(
        asset_key="scholarly_records",
        metadata=write_table(records, paths.derived, "scholarly_records", part, **extra),
    )
    counts = {f"verdict_{o}": outcomes.get(o, 0) for o in check.VERDICTS}
    yield dg.MaterializeResult(
        asset_key="metadata_checks",
        metadata=write_table(checks, paths.derived, "metadata_checks", part,
                             retracted=retracted, **counts, **extra),
    )


@dg.asset(
    deps=["claims", "citations", "citation_captures"],
    partitions_def=date_codebook,
    description="Per claim: citations and independent sources (citations sharing a payload "
    "digest or an origin count once).",
)
def claim_independence(
    context: dg.AssetExecutionContext, paths: PathsResource
) -> dg.MaterializeResult:
    """Count independent sources per claim; digests come from citation_captures when present."""
    part = judged_partition(context.partition_key)
    daily = {"observation_date": part["observation_date"]}
    key = reuse_key(paths.derived, "claim_independence",
                    {"claims": daily, "citations": daily, "citation_captures": part})
    reused = reuse_other_codebook(paths.derived, "claim_independence", part, key)
    if reused is not None:
        return dg.MaterializeResult(metadata=reused)
    claims = parquet_io.read_partition(paths.derived, "claims", daily)
    citations = parquet_io.read_partition(paths.derived, "citations", daily)
    captures = parquet_io.read_optional(paths.derived, "citation_captures", part)
    table = check.claim_independence(claims, citations, captures)
    shared = pc.sum(table.column("has_shared_source")).as_py() or 0
    meta = write_table(
        table,
        paths.derived,
        "claim_independence",
        part,
        claims_with_shared_source=shared,
        payload_digests="citation_captures" if captures is not None else "absent: origin only",
    )
    remember_key(paths.derived, "claim_independence", part, key)
    return dg.MaterializeResult(metadata=meta)
