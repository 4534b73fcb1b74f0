-- Purpose: the citations of every claim object as separate JSON values, unnested once.
-- Grain: one row per (file, line, claim_index, citation_index). Input: claim_objects.
SELECT
    cl.file,
    cl.line,
    cl.claim_index,
    c.k - 1 AS citation_index,
    c.v AS citation
FROM claim_objects AS cl,
    unnest(json_extract(cl.claim, '$.citations[*]')) WITH ORDINALITY AS c (v, k)
WHERE json_type(cl.claim) = 'OBJECT' AND json_type(cl.claim, '$.citations') = 'ARRAY'
