"""Seed 000 assets: source_risk_records (append-only ledger), omission_endpoints, the claim
ledger and rejected_records per date × codebook, and the conformance suite (unpartitioned).

The alignment table ``citation_captures`` is used when it is on disk for the partition;
without it the source snapshot digest binds what the record carries and says so (origin
``record_url``). It is declared as a dependency so Dagster orders alignment first once it exists.
"""

from pathlib import Path

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq

from assets._metadata import PREVIEW_ROWS, table_metadata
from citeaudit import codebook, parquet_io, storage
from citeaudit.source_risk import audit
from pipelines.partitions import date_codebook, judged_partition
from pipelines.resources import PathsResource


def _counts(path: Path, column: str) -> dict[str, int]:
    """Rows per value of one column of a written file (only that column is read)."""
    table = parquet_io.read_table(path, columns=[column])
    if table.num_rows == 0:
        return {}
    groups = table.group_by(column).aggregate([([], "count_all")]).to_pylist()
    return {str(g[column]): g["count_all"] for g in sorted(groups, key=lambda g: str(g[column]))}


def _head(path: Path) -> pa.Table:
    """The first rows of a written file, for the metadata preview (not the whole table)."""
    with pq.ParquetFile(storage.arrow_source(path)) as f:
        batch = next(f.iter_batches(batch_size=PREVIEW_ROWS), None)
        return pa.Table.from_batches([batch]) if batch is not None else f.schema_arrow.empty_table()


@dg.multi_asset(
    specs=[
        dg.AssetSpec("source_risk_records", group_name="source_risk",
                     deps=["answers", "citations", "citation_captures"],
                     description="Accepted source-risk records (append-only ledger), one per "
                                 "record digest, with tuple digest, parent and canonical JSON."),
        dg.AssetSpec("rejected_records", group_name="source_risk",
                     deps=["answers", "citations", "citation_captures"],
                     description="Source-risk lines that failed the record contract: defect "
                                 "type (seed 000's twelve and the pipeline's), stage, reason."),
        dg.AssetSpec("omission_endpoints", group_name="source_risk",
                     deps=["source_risk_records"],
                     description="Per current tuple: R_O (NULL = unresolved), priority, policy "
                                 "action PASS / CONTEXTUALIZE / REVIEW / ABSTAIN."),
        dg.AssetSpec("source_risk_claim_ledger", group_name="source_risk",
                     deps=["omission_endpoints"],
                     description="Endpoint outputs of current tuples gathered per claim."),
    ],
    partitions_def=date_codebook,
)
def source_risk(context: dg.AssetExecutionContext, paths: PathsResource):
    """Validate, seal and link the date's records, then resolve the current tuples (streamed
    to the four partitions by row groups: memory does not grow with the number of records)."""
    part = judged_partition(context.partition_key)
    book = codebook.load_version(paths.raw, part["codebook"])
    def progress(done: int) -> None:
        context.log.info(f"source_risk {context.partition_key}: {done:,} lines validated")

    written = audit.write(paths.raw, paths.derived, part["observation_date"], book, progress)
    ends = written.paths["omission_endpoints"]
    r_o = parquet_io.read_table(ends, columns=["r_o"]).column(0)
    extras = {
        "source_risk_records": {"source_snapshots": written.source_snapshots},
        "rejected_records": {"by_defect_type": _counts(written.paths["rejected_records"],
                                                        "reason")},
        "omission_endpoints": {"by_policy_action": _counts(ends, "policy_action"),
                               "unresolved": r_o.null_count},
        "source_risk_claim_ledger": {},
    }
    for name, path in written.paths.items():
        meta = table_metadata(_head(path), path, **extras[name])
        meta["dagster/row_count"] = dg.MetadataValue.int(written.rows[name])
        yield dg.MaterializeResult(asset_key=name, metadata=meta)


@dg.asset(
    group_name="source_risk_conformance",
    description="Seed 000 §IV conformance suite run from this implementation: fixtures, oracle, "
                "predictions, mutation log, CSV summaries and a checksum manifest.",
)
def source_risk_conformance(paths: PathsResource) -> dg.MaterializeResult:
    """Run the suite into <derived>/source_risk_conformance/ and tabulate Table III."""
    from citeaudit.source_risk.conformance.suite import run_suite

    folder = parquet_io.partition_dir(paths.derived, "source_risk_conformance")
    counts = run_suite(folder / "files")
    rows = [{"check": k, "passed": v[0], "total": v[1]} for k, v in counts["table3"].items()]
    table = pa.Table.from_pylist(rows)
    path = parquet_io.write_partition(table, paths.derived, "source_risk_conformance")
    return dg.MaterializeResult(metadata=table_metadata(
        table, path, oracle_agreement=f"{counts['oracle_agreement']}/{counts['states']}",
        mutations_rejected=f"{counts['mutations_expected_type']}/{counts['mutations']}"))
