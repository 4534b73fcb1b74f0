-- Purpose: the `citations` table: one row per citation of a claim of an accepted answer.
-- Grain: one row per citation_id. Input: typed_answers (file, line, answer).
WITH claims AS (
    SELECT t.answer.answer_id AS answer_id, c.claim, (c.k - 1)::INTEGER AS claim_index
    FROM typed_answers AS t, unnest(t.answer.claims) WITH ORDINALITY AS c (claim, k)
),
citations AS (
    SELECT cl.answer_id, cl.claim.claim_id AS claim_id, cl.claim_index,
        ci.citation, (ci.k - 1)::INTEGER AS citation_index
    FROM claims AS cl, unnest(cl.claim.citations) WITH ORDINALITY AS ci (citation, k)
)
SELECT
    answer_id,
    claim_id,
    claim_index,
    citation.citation_id AS citation_id,
    citation_index,
    citation.tag AS tag,
    citation.source_id AS source_id,
    citation.url AS url,
    citation.retrieved_at::TIMESTAMPTZ AS retrieved_at,
    citation.chunk_offset[1] AS chunk_start,
    citation.chunk_offset[2] AS chunk_end,
    citation.quote AS quote,
    citation.source_type AS source_type,
    citation.title AS title,
    citation.authors AS authors,
    citation.year AS year,
    citation.venue AS venue,
    citation.doi AS doi
FROM citations
ORDER BY answer_id, claim_index, citation_index
