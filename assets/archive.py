"""Archive asset: the capture index of every WARC/ARC record of one crawl date."""

import dagster as dg
import pyarrow.compute as pc

from assets._metadata import table_metadata
from citeaudit import parquet_io
from citeaudit.archive.index import index_paths
from citeaudit.layout import warc_files
from pipelines.partitions import observation_date
from pipelines.resources import PathsResource


@dg.asset(
    group_name="archive",
    partitions_def=observation_date,
    description=(
        "One row per WARC/ARC record of interest under warc/<crawl_date>/: offsets, SURT key, "
        "status, redirect target, digests (declared and verified), revisit targets, and a reason "
        "for every unreadable or truncated record."
    ),
)
def captures(context: dg.AssetExecutionContext, paths: PathsResource) -> dg.MaterializeResult:
    """Index the date's WARC files (several in parallel) into one parquet partition."""
    date = context.partition_key
    files = warc_files(paths.raw, date)
    table = index_paths([(f, f.relative_to(paths.raw).as_posix()) for f in files])
    path = parquet_io.write_partition(table, paths.derived, "captures", {"crawl_date": date})
    errors = (
        table.num_rows - pc.sum(pc.is_null(table.column("error"))).as_py() if table.num_rows else 0
    )
    return dg.MaterializeResult(
        metadata=table_metadata(table, path, warc_files=len(files), records_with_error=errors)
    )
