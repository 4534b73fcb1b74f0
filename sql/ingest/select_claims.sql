-- Purpose: the `claims` table: one row per claim of an accepted answer, in answer order.
-- Grain: one row per claim_id. Input: accepted_answers (file, line, j).
SELECT
    a.j ->> '$.answer_id' AS answer_id,
    c.v ->> '$.claim_id' AS claim_id,
    (c.k - 1)::INTEGER AS claim_index,
    (c.v ->> '$.span[0]')::INTEGER AS span_start,
    (c.v ->> '$.span[1]')::INTEGER AS span_end,
    c.v ->> '$.text' AS text,
    CASE WHEN json_type(c.v, '$.verification_worthy') = 'BOOLEAN'
        THEN (c.v ->> '$.verification_worthy')::BOOLEAN END AS verification_worthy,
    json_array_length(c.v, '$.citations')::INTEGER AS n_citations
FROM accepted_answers AS a,
    unnest(json_extract(a.j, '$.claims[*]')) WITH ORDINALITY AS c (v, k)
ORDER BY answer_id, claim_index
