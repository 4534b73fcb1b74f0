"""Citation assets: claim_checks and answer_checks, the fail-closed verification rule
(docs/references.md#fail-closed-verification)."""

import dagster as dg
import pyarrow.compute as pc

from assets._metadata import write_table
from citeaudit import parquet_io
from citeaudit.citations import checks
from pipelines.partitions import observation_date
from pipelines.resources import PathsResource


@dg.multi_asset(
    specs=[
        dg.AssetSpec(
            "claim_checks",
            deps=["answers", "claims", "citations"],
            description="Per claim: pass, fail (first failure: missing/malformed/hallucinated), "
                        "unresolved (uncited, worthiness unknown) or exempt.",
        ),
        dg.AssetSpec(
            "answer_checks",
            deps=["answers", "claims", "citations"],
            description="Per answer: verified (served), rejected by its first failing claim, or "
                        "unresolved.",
        ),
    ],
    partitions_def=observation_date,
)
def check_citations(context: dg.AssetExecutionContext, paths: PathsResource):
    """Run the fail-closed checks in SQL over the date's ingested tables."""
    part = {"observation_date": context.partition_key}
    answers = parquet_io.read_partition(paths.derived, "answers", part)
    claims = parquet_io.read_partition(paths.derived, "claims", part)
    citations = parquet_io.read_partition(paths.derived, "citations", part)
    claim_checks, answer_checks = checks.check(answers, claims, citations)
    counts = {v: pc.sum(pc.equal(answer_checks.column("verdict"), v)).as_py() or 0
              for v in ("verified", "rejected", "unresolved")}
    for name, table, extra in (
        ("claim_checks", claim_checks, {}),
        ("answer_checks", answer_checks, counts),
    ):
        yield dg.MaterializeResult(
            asset_key=name, metadata=write_table(table, paths.derived, name, part, **extra))
