-- Purpose: the accepted records (`source_risk_records`), one per record digest: the ledger
-- rows of every batch (sr_spool) that lineage kept, with the parent's record digest, typed
-- predicates (NULL = unresolved), dimensions and the canonical JSON the record digest is taken
-- over, in file and line order (the order of the input, kept by the filter). Grain: one row
-- per record_digest. Input: sr_spool (one batch's file, each row beside its lineage outcome:
-- select_batch_lineage, aligned by position). Parameter: $gate (the validation gate these
-- records completed).
SELECT
    s.record_digest,
    s.tuple_digest,
    s.parent_record_digest AS parent_record,
    s.parent_reference,
    s.query_id,
    s.query_sha256,
    s.answer_id,
    s.claim_id,
    s.source_url,
    s.canonical_url,
    s.rank,
    s.collected_at,
    s.source_role,
    s.codebook_version,
    s.annotator_id,
    s.annotated_at,
    s.I,
    s.A,
    s.M,
    s.D,
    s.support,
    s.dimensions,
    s.weights,
    s.source_snapshot_sha256,
    s.source_snapshot_origin,
    s.answer_snapshot_sha256,
    s.answer_snapshot_origin,
    s.pipeline_name,
    s.pipeline_version,
    s.pipeline_config,
    $gate AS validation_gate,
    s.record_json,
    s.line_sha256,
    s.line_canonical_sha256,
    s.file,
    s.line
FROM sr_spool AS s
WHERE s.final_defect IS NULL
