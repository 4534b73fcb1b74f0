"""The source-risk conformance asset: the conformance suite of the source-risk audit
specification (docs/references.md#source-risk-audit) run from this implementation.

Unpartitioned and in a group of its own, so no nightly job runs it: materialize it when the
source-risk code changes.
"""

import dagster as dg
import pyarrow as pa

from assets._metadata import write_table
from citeaudit import parquet_io
from pipelines.resources import PathsResource


@dg.asset(
    description="The source-risk specification's conformance suite run from this "
                "implementation: fixtures, oracle, predictions, mutation log, CSV summaries "
                "and a checksum manifest.",
)
def source_risk_conformance(paths: PathsResource) -> dg.MaterializeResult:
    """Run the suite into <derived>/source_risk_conformance/ and tabulate Table III."""
    from citeaudit.source_risk.conformance.suite import run_suite

    folder = parquet_io.partition_dir(paths.derived, "source_risk_conformance")
    counts = run_suite(folder / "files")
    rows = [{"check": k, "passed": v[0], "total": v[1]} for k, v in counts["table3"].items()]
    return dg.MaterializeResult(metadata=write_table(
        pa.Table.from_pylist(rows), paths.derived, "source_risk_conformance",
        oracle_agreement=f"{counts['oracle_agreement']}/{counts['states']}",
        mutations_rejected=f"{counts['mutations_expected_type']}/{counts['mutations']}"))
