-- Purpose: the `citations` table: one row per citation of a claim of an accepted answer.
-- Grain: one row per citation_id. Input: accepted_answers (file, line, j).
WITH claims AS (
    SELECT a.j ->> '$.answer_id' AS answer_id, c.v AS claim, (c.k - 1)::INTEGER AS claim_index
    FROM accepted_answers AS a,
        unnest(json_extract(a.j, '$.claims[*]')) WITH ORDINALITY AS c (v, k)
)
SELECT
    cl.answer_id,
    cl.claim ->> '$.claim_id' AS claim_id,
    cl.claim_index,
    ci.v ->> '$.citation_id' AS citation_id,
    (ci.k - 1)::INTEGER AS citation_index,
    ci.v ->> '$.tag' AS tag,
    ci.v ->> '$.source_id' AS source_id,
    ci.v ->> '$.url' AS url,
    (ci.v ->> '$.retrieved_at')::TIMESTAMPTZ AS retrieved_at,
    (ci.v ->> '$.chunk_offset[0]')::INTEGER AS chunk_start,
    (ci.v ->> '$.chunk_offset[1]')::INTEGER AS chunk_end,
    ci.v ->> '$.quote' AS quote,
    ci.v ->> '$.source_type' AS source_type,
    ci.v ->> '$.title' AS title,
    CASE WHEN json_type(ci.v, '$.authors') = 'ARRAY'
        THEN CAST(ci.v -> '$.authors' AS VARCHAR[]) END AS authors,
    (ci.v ->> '$.year')::INTEGER AS year,
    ci.v ->> '$.venue' AS venue,
    ci.v ->> '$.doi' AS doi
FROM claims AS cl,
    unnest(json_extract(cl.claim, '$.citations[*]')) WITH ORDINALITY AS ci (v, k)
ORDER BY answer_id, claim_index, citation_index
