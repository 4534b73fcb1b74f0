-- Purpose: the claims of every parsed answer line as separate JSON values, unnested once for
-- the defect checks and the id list; with the answer's text length for the span check.
-- Grain: one row per (file, line, claim_index). Input: answer_json from parse_answer_lines.
SELECT
    a.file,
    a.line,
    c.k - 1 AS claim_index,
    c.v AS claim,
    CASE WHEN json_type(a.j, '$.answer_text') = 'VARCHAR'
        THEN length(a.j ->> '$.answer_text') END AS answer_text_length
FROM answer_json AS a,
    unnest(json_extract(a.j, '$.claims[*]')) WITH ORDINALITY AS c (v, k)
WHERE a.j IS NOT NULL AND json_type(a.j, '$.claims') = 'ARRAY'
