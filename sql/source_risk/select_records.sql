-- Purpose: the accepted records (`source_risk_records`), one per record digest: the ledger
-- rows of every batch (sr_spool) that lineage kept, with the parent's record digest, typed
-- predicates (NULL = unresolved), dimensions and the canonical JSON the record digest is taken
-- over, in file and line order (the order of the input, kept by the filter). Grain: one row
-- per record_digest. Input: sr_spool (one batch's file, each row beside its lineage outcome:
-- select_batch_lineage, aligned by position). Parameter: $gate (the validation gate these
-- records completed).
-- annotated_at and collected_at are typed TIMESTAMP WITH TIME ZONE (NULL when the text is not
-- a timestamp); the text as written, which the record digest binds, is kept beside them as
-- annotated_at_text and collected_at_text.
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
    try_cast(s.collected_at AS TIMESTAMPTZ) AS collected_at,
    s.collected_at AS collected_at_text,
    s.source_role,
    s.codebook_version,
    s.annotator_id,
    try_cast(s.annotated_at AS TIMESTAMPTZ) AS annotated_at,
    s.annotated_at AS annotated_at_text,
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
    s.file AS source_file,
    s.line AS source_line
FROM sr_spool AS s
WHERE s.final_defect IS NULL
