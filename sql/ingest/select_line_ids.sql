-- Purpose: every answer, claim and citation id of a batch of answer lines with where it sits,
-- so duplicates can be found within the batch and against earlier batches (seen_ids).
-- Grain: one row per id occurrence. Input: answer_json from parse_answer_lines.
WITH
objects AS (
    SELECT file, line, j FROM answer_json WHERE j IS NOT NULL
),
claims AS (
    SELECT o.file, o.line, o.j, c.k - 1 AS claim_index, c.v AS claim
    FROM objects AS o,
        unnest(json_extract(o.j, '$.claims[*]')) WITH ORDINALITY AS c (v, k)
    WHERE json_type(o.j, '$.claims') = 'ARRAY'
),
citations AS (
    SELECT
        cl.file, cl.line, cl.claim_index, c.k - 1 AS citation_index, c.v AS citation
    FROM claims AS cl,
        unnest(json_extract(cl.claim, '$.citations[*]')) WITH ORDINALITY AS c (v, k)
    WHERE json_type(cl.claim, '$.citations') = 'ARRAY' AND json_type(cl.claim) = 'OBJECT'
)
SELECT file, line, -1 AS claim_index, -1 AS citation_index, 'answer_id' AS kind,
    'answer_id' AS field, j ->> '$.answer_id' AS id
FROM objects WHERE json_type(j, '$.answer_id') = 'VARCHAR'
UNION ALL
SELECT file, line, claim_index, -1, 'claim_id',
    'claims[' || claim_index || '].claim_id', claim ->> '$.claim_id'
FROM claims WHERE json_type(claim, '$.claim_id') = 'VARCHAR'
UNION ALL
SELECT file, line, claim_index, citation_index, 'citation_id',
    'claims[' || claim_index || '].citations[' || citation_index || '].citation_id',
    citation ->> '$.citation_id'
FROM citations WHERE json_type(citation, '$.citation_id') = 'VARCHAR'
