-- Purpose: settle each line's snapshot digests and build the canonical JSON its tuple digest is
-- taken over (query identity, answer and source snapshot digests, pipeline configuration).
-- Grain: one row per typed line (keys and new columns only: wide rows are copied once). Inputs: sr_typed, and sr_content_hashes(file, line,
-- answer_text_sha256, source_text_sha256, source_record_sha256) hashed in Python (hashlib).
-- A carried digest wins and is checked later against the content; otherwise the digest of the
-- content (carried text, answers table, aligned capture, or the record's URL) is used.
SELECT
    t.file,
    t.line,
    h.answer_text_sha256,
    h.source_text_sha256,
    coalesce(t.answer_carried_sha256, h.answer_text_sha256) AS answer_sha256,
    coalesce(t.source_carried_sha256, h.source_text_sha256, t.source_capture_sha256,
             h.source_record_sha256) AS source_sha256,
    to_json(struct_pack(
        answer_id := t.answer_id,
        answer_sha256 := coalesce(t.answer_carried_sha256, h.answer_text_sha256),
        pipeline := struct_pack(config := pipeline_config, name := pipeline_name,
                                version := pipeline_version),
        query_id := query_id,
        query_sha256 := query_sha256,
        source_sha256 := coalesce(t.source_carried_sha256, h.source_text_sha256,
                                  t.source_capture_sha256, h.source_record_sha256),
        source_url := source_url
    )) AS tuple_json
FROM sr_typed AS t
JOIN sr_content_hashes AS h USING (file, line)
ORDER BY t.file, t.line
