"""The source-risk record contract of the source-risk audit specification
(docs/references.md#source-risk-audit): names, stages, pipeline identity, schemas.

A stored record binds the query identity, the source and answer snapshot digests (SHA-256) and
the pipeline configuration into a tuple digest, and every stored field into a record digest
(the SHA-256 of the record's canonical JSON: keys sorted, no spaces, UTF-8, built by
``sql/source_risk/seal_records.sql``). A revision keeps the tuple digest, gets a new record
digest and names its parent in ``parent_record``.
"""

from __future__ import annotations

import pyarrow as pa

PREDICATES = ("I", "A", "M", "D")

# The twelve structural defect types of the specification's conformance suite ("identity,
# snapshot and record checksums, missing codebook or pipeline fields, invalid nullable labels,
# inconsistent dimensions, missing or invalid spans, mismatched quotes, and unnormalized
# weights").
SEED_DEFECTS = (
    "identity_mismatch",
    "source_snapshot_checksum",
    "answer_snapshot_checksum",
    "record_checksum",
    "missing_codebook",
    "missing_pipeline_field",
    "invalid_nullable_label",
    "inconsistent_dimensions",
    "missing_span",
    "invalid_span",
    "mismatched_quote",
    "unnormalized_weights",
)
# Defects the pipeline meets in real input that the specification's synthetic suite does not plant.
PIPELINE_DEFECTS = (
    "malformed_json",
    "missing_required_field",
    "unknown_source_role",
    "unknown_answer",
    "duplicate_record",
    "orphan_revision",
    "revision_identity",
)
DEFECT_TYPES = SEED_DEFECTS + PIPELINE_DEFECTS

# The specification's execution order; a record that passes all of them has completed this gate.
STAGES = ("fields_and_hashes", "predicates_and_evidence", "dimensions_and_weights",
          "endpoint", "priority")
VALIDATION_GATE = "structural_conformance"  # not semantic validation (the specification)

PIPELINE_NAME = "citeaudit.source_risk"
CONTRACT_VERSION = "1"

# rejected_records: the defect type is the row's reason (an enumerable code), the words are its
# detail, and record_keys names the record the line claims to be (answer_id=..., source_url=...)
REJECTED_SCHEMA = pa.schema([
    ("source_file", pa.string()),
    ("source_line", pa.int64()),
    ("reason", pa.string()),
    ("stage", pa.string()),
    ("detail", pa.string()),
    ("record_keys", pa.string()),
    ("raw", pa.string()),
])


def pipeline_config(source_snapshots: str) -> dict[str, str]:
    """The pipeline configuration a tuple digest binds (contract version, snapshot policy).

    ``source_snapshots`` is ``aligned_capture`` when the alignment table was available to the
    run, else ``record_url``: the source digest then binds only what the record carries.
    """
    return {"contract": CONTRACT_VERSION, "source_snapshots": source_snapshots}
