"""Source-risk assets, the source-risk audit specification (docs/references.md#source-risk-audit):
source_risk_records (append-only ledger), omission_endpoints, the claim ledger and
rejected_records per date × codebook (the conformance suite is ``assets/source_risk_conformance``).

The alignment table ``citation_captures`` is used when it is on disk for the partition;
without it the source snapshot digest binds what the record carries and says so (origin
``record_url``). It is declared as a dependency so Dagster orders alignment first once it exists.
"""

import dagster as dg

from assets._metadata import count_by, file_metadata
from citeaudit import codebook, parquet_io
from citeaudit.source_risk import audit
from pipelines.partitions import date_codebook, judged_partition
from pipelines.resources import PathsResource


@dg.multi_asset(
    specs=[
        dg.AssetSpec("source_risk_records",
                     deps=["answers", "citations", "citation_captures"],
                     description="Accepted source-risk records (append-only ledger), one per "
                                 "record digest, with tuple digest, parent and canonical JSON."),
        dg.AssetSpec("rejected_records",
                     deps=["answers", "citations", "citation_captures"],
                     description="Source-risk lines that failed the record contract: defect "
                                 "type (the specification's twelve and the pipeline's), stage, "
                                 "reason."),
        dg.AssetSpec("omission_endpoints",
                     deps=["source_risk_records"],
                     description="Per current tuple: R_O (NULL = unresolved), priority, policy "
                                 "action PASS / CONTEXTUALIZE / REVIEW / ABSTAIN."),
        dg.AssetSpec("source_risk_claim_ledger",
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
        "rejected_records": {"by_defect_type": count_by(written.paths["rejected_records"],
                                                         "reason")},
        "omission_endpoints": {"by_policy_action": count_by(ends, "policy_action"),
                               "unresolved": r_o.null_count},
        "source_risk_claim_ledger": {},
    }
    for name, path in written.paths.items():
        yield dg.MaterializeResult(asset_key=name, metadata=file_metadata(path, **extras[name]))

