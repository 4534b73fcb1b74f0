-- Purpose: the lines of one batch that passed the ordered checks, as ledger rows before
-- lineage (duplicates and parents are resolved over every batch by link_revisions), with the
-- raw line kept for a canonical line digest or a lineage rejection. Grain: one row per line
-- that passed. Inputs: sr_typed, sr_checked, sr_sealed_tuples, sr_sealed_records, sr_lines.
SELECT
    record_digest_calc AS record_digest,
    sr_checked.tuple_digest,
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
    record_json,
    sr_typed.line_sha256,
    file,
    line,
    sr_lines.raw
FROM sr_typed
JOIN sr_checked USING (file, line)
JOIN sr_sealed_tuples USING (file, line)
JOIN sr_sealed_records USING (file, line)
JOIN sr_lines USING (file, line)
WHERE defect_type IS NULL
