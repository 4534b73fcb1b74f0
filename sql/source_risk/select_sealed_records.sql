-- Purpose: the lines of one batch that passed the ordered checks, as ledger rows before
-- lineage (duplicates and parents are resolved over every batch by link_revisions), with the
-- raw line kept for a canonical line digest or a lineage rejection. Grain: one row per line
-- that passed, in file and line order (sr_checked's, kept by the filter). Input: sr_checked
-- (check_records: keys, defect, raw line and stored fields).
SELECT
    c.record_digest_calc AS record_digest,
    c.tuple_digest,
    c.parent_record AS parent_reference,
    c.query_id,
    c.query_sha256,
    c.answer_id,
    c.claim_id,
    c.source_url,
    c.canonical_url,
    c.rank,
    c.collected_at,
    c.source_role,
    c.codebook_version,
    c.annotator_id,
    c.annotated_at,
    c.i_val AS I,
    c.a_val AS A,
    c.m_val AS M,
    c.d_val AS D,
    c.support,
    c.dimensions,
    c.weights,
    c.source_sha256 AS source_snapshot_sha256,
    c.source_origin AS source_snapshot_origin,
    c.answer_sha256 AS answer_snapshot_sha256,
    c.answer_origin AS answer_snapshot_origin,
    c.pipeline_name,
    c.pipeline_version,
    c.pipeline_config,
    c.record_json,
    c.line_sha256,
    c.file,
    c.line,
    c.raw
FROM sr_checked AS c
WHERE c.defect_type IS NULL
