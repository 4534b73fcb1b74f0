"""The ``metrics`` asset: stratified rates with denominators, unresolved counts and intervals."""

import dagster as dg

from assets._metadata import write_table
from citeaudit.metrics import BY_NAME, compute_partition, inputs
from citeaudit.report import headline
from pipelines.partitions import date_codebook, judged_partition
from pipelines.resources import PathsResource

# Daily inputs map date × codebook onto its date (Dagster infers the mapping from the shared
# date dimension); judged inputs share the partition.
METRIC_DEPS = [
    *inputs.DAILY,
    "citation_existence",
    "passage_checks",
    "support_judgments",
    "support_labels",
    "metadata_checks",
    "omission_endpoints",
    "grader_judgments",
    "review_sample",
]


def _holds(row: dict) -> bool:
    """A computed row is coherent: counts ordered, bounds around the estimate, rates in [0,1]."""
    kind = BY_NAME[row["metric"]].kind
    if kind == "rate" and not (
        0 <= row["numerator"] <= row["denominator"]
        and 0.0 <= row["estimate"] <= 1.0
    ):
        return False
    if kind == "f1" and not 0.0 <= row["estimate"] <= 1.0:
        return False
    low, high = row["ci_low"], row["ci_high"]
    return low is None or (low <= row["estimate"] <= high)


@dg.asset(
    partitions_def=date_codebook,
    deps=METRIC_DEPS,
    check_specs=[
        dg.AssetCheckSpec("intervals_hold", asset="metrics",
                          description="every rate: 0 <= low <= estimate <= high <= 1, "
                                      "numerator <= denominator"),
        dg.AssetCheckSpec("inputs_available", asset="metrics",
                          description="every metric's input tables are materialized (WARN)"),
    ],
    description=(
        "One row per (metric, stratum): engine × domain × risk_band and the per-engine, "
        "per-domain and overall margins, with numerator, denominator, unresolved (beside, "
        "never inside), estimate, 95% interval, method and weighting."
    ),
)
def metrics(context: dg.AssetExecutionContext, paths: PathsResource):
    """Count units per stratum in DuckDB, then attach Wilson or weighted bootstrap intervals.

    A metric whose input table is not materialized for this date × codebook gets one
    ``input_missing`` row and a warning in the log, never a zero rate.
    """
    part = judged_partition(context.partition_key)
    date, version = part["observation_date"], part["codebook"]
    result = compute_partition(paths.derived, date, version)
    for metric, absent in result.missing.items():
        context.log.warning(f"{metric}: input not available ({', '.join(absent)}); no rate")
    rows = result.table.to_pylist()
    meta = write_table(
        result.table,
        paths.derived,
        "metrics",
        part,
        headline=dg.MetadataValue.md(headline.markdown(rows, f"{date} · codebook {version}")),
        inputs_used=", ".join(sorted(result.inputs)),
        metrics_without_input=", ".join(sorted(result.missing)) or "none",
    )
    broken = [f"{r['metric']}/{r['margin']}/{r['engine']}/{r['domain']}/{r['risk_band']}"
              for r in rows if r["verdict"] == "estimated" and not _holds(r)]
    yield dg.AssetCheckResult(
        check_name="intervals_hold", passed=not broken,
        metadata={"rows_checked": sum(r["verdict"] == "estimated" for r in rows),
                  "broken": ", ".join(broken[:20]) or "none"})
    yield dg.AssetCheckResult(
        check_name="inputs_available", passed=not result.missing,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={"metrics_without_input": ", ".join(sorted(result.missing)) or "none"})
    yield dg.MaterializeResult(metadata=meta)
