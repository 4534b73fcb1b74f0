"""The ``metrics`` asset: stratified rates with denominators, unresolved counts and intervals."""

import dagster as dg

from assets.metadata import table_metadata
from citeaudit import parquet_io
from citeaudit.metrics import compute_partition, inputs
from citeaudit.report import headline
from pipelines.partitions import date_codebook, judged_partition
from pipelines.resources import PathsResource

# Daily inputs map date × codebook onto its date (Dagster infers the mapping from the shared
# date dimension); judged inputs share the partition.
METRIC_DEPS = [
    *inputs.DAILY,
    "citation_existence",
    "passage_checks",
    "support_labels",
    "metadata_checks",
    "omission_endpoints",
]


@dg.asset(
    group_name="metrics",
    partitions_def=date_codebook,
    deps=METRIC_DEPS,
    description=(
        "One row per (metric, stratum): engine × domain × risk_band and the per-engine, "
        "per-domain and overall margins, with numerator, denominator, unresolved (beside, "
        "never inside), estimate, 95% interval, method and weighting."
    ),
)
def metrics(context: dg.AssetExecutionContext, paths: PathsResource) -> dg.MaterializeResult:
    """Count units per stratum in DuckDB, then attach Wilson or weighted bootstrap intervals.

    A metric whose input table is not materialized for this date × codebook gets one
    ``input_missing`` row and a warning in the log, never a zero rate.
    """
    part = judged_partition(context.partition_key)
    date, version = part["observation_date"], part["codebook"]
    result = compute_partition(paths.derived, date, version)
    for metric, absent in result.missing.items():
        context.log.warning(f"{metric}: input not available ({', '.join(absent)}); no rate")
    path = parquet_io.write_partition(result.table, paths.derived, "metrics", part)
    rows = result.table.to_pylist()
    return dg.MaterializeResult(
        metadata=table_metadata(
            result.table,
            path,
            headline=dg.MetadataValue.md(headline.markdown(rows, f"{date} · codebook {version}")),
            inputs_used=", ".join(sorted(result.inputs)),
            metrics_without_input=", ".join(sorted(result.missing)) or "none",
        )
    )
