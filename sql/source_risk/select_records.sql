-- Purpose: the accepted records of a batch as ledger rows (`source_risk_records`), one per
-- record digest, with typed predicates (NULL = unresolved), dimensions and the canonical JSON
-- the record digest is taken over. Grain: one row per record_digest. Inputs: sr_typed, sr_checked,
-- sr_linked, sr_sealed_tuples, sr_sealed_records.
-- Parameter: $gate (the validation gate these records completed).
SELECT
    record_digest_calc AS record_digest,
    sr_checked.tuple_digest,
    parent_record_digest AS parent_record,
    sr_typed.parent_record AS parent_reference,
    query_id,
    query_sha256,
    answer_id,
    claim_id,
    source_url,
    canonical_url,
    rank,
    collected_at,
    source_role,
    codebook_version,
    annotator_id,
    annotated_at,
    i_val AS I,
    a_val AS A,
    m_val AS M,
    d_val AS D,
    support,
    dimensions,
    weights,
    source_sha256 AS source_snapshot_sha256,
    source_origin AS source_snapshot_origin,
    answer_sha256 AS answer_snapshot_sha256,
    answer_origin AS answer_snapshot_origin,
    pipeline_name,
    pipeline_version,
    pipeline_config,
    $gate AS validation_gate,
    record_json,
    sr_typed.line_sha256,
    line_canonical_sha256,
    file,
    line
FROM sr_typed
JOIN sr_checked USING (file, line)
JOIN sr_linked USING (file, line)
JOIN sr_sealed_tuples USING (file, line)
JOIN sr_sealed_records USING (file, line)
WHERE final_defect IS NULL
ORDER BY record_digest
