-- Purpose: settle each line's snapshot digests and build the canonical JSON its tuple digest is
-- taken over (query identity, answer and source snapshot digests, pipeline configuration).
-- Grain: one row per typed line: every column of sr_typed (type_record_lines, the step before
-- in validate_batch) and the new ones; no join, so the steps stream as one pass.
-- Function: sr_sha256(text) (hex SHA-256 of UTF-8 text in hashlib, NULL stays NULL).
-- A carried digest wins and is checked later against the content; otherwise the digest of the
-- content (carried text, answers table, aligned capture, or the record's URL) is used.
WITH h AS (
    SELECT
        t.*,
        coalesce(sr_sha256(t.answer_carried_text), t.answer_joined_sha256)
            AS answer_text_sha256,
        sr_sha256(t.source_text) AS source_text_sha256,
        sr_sha256(t.source_record_json) AS source_record_sha256
    FROM sr_typed AS t
),
d AS (
    SELECT
        h.*,
        coalesce(h.answer_carried_sha256, h.answer_text_sha256) AS answer_sha256,
        coalesce(h.source_carried_sha256, h.source_text_sha256, h.source_capture_sha256,
                 h.source_record_sha256) AS source_sha256
    FROM h
)
SELECT
    d.*,
    to_json(struct_pack(
        answer_id := d.answer_id,
        answer_sha256 := d.answer_sha256,
        pipeline := struct_pack(config := d.pipeline_config, name := d.pipeline_name,
                                version := d.pipeline_version),
        query_id := d.query_id,
        query_sha256 := d.query_sha256,
        source_sha256 := d.source_sha256,
        source_url := d.source_url
    )) AS tuple_json
FROM d
