-- Purpose: the answer id a source-risk line names (a JSON string at top level), the key that
-- dates the line; NULL when DuckDB does not read one (Python's json then has the last word).
-- Grain: one row per line of the batch. Input: sr_line_batch(file, line, raw).
WITH v AS (
    SELECT line, CASE WHEN json_valid(raw) THEN json_extract(raw, '$.answer_id') END AS value
    FROM sr_line_batch
)
SELECT
    line,
    CASE WHEN json_type(value) = 'VARCHAR' THEN value ->> '$' END AS answer_id,
    json_type(value) = 'VARCHAR' AS parsed
FROM v
ORDER BY line
