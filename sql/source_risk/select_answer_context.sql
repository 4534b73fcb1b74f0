-- Purpose: what the source-risk records need from the date's accepted answers: the query and
-- answer texts (hashed in Python into the query identity and the answer snapshot digest) and
-- the observation time. Grain: one row per answer_id. Input: sr_answer_rows (answers table).
SELECT
    answer_id,
    query_id,
    query_text,
    answer_text,
    strftime(observed_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ') AS observed_at
FROM sr_answer_rows
ORDER BY answer_id
