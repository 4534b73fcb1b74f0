-- Purpose: the `claims` table: one row per claim of an accepted answer, in answer order.
-- Grain: one row per claim_id. Input: typed_answers (file, line, answer).
WITH claims AS (
    SELECT t.answer.answer_id AS answer_id, c.claim, (c.k - 1)::INTEGER AS claim_index
    FROM typed_answers AS t, unnest(t.answer.claims) WITH ORDINALITY AS c (claim, k)
)
SELECT
    answer_id,
    claim.claim_id AS claim_id,
    claim_index,
    claim.span[1] AS span_start,
    claim.span[2] AS span_end,
    claim.text AS text,
    claim.verification_worthy AS verification_worthy,
    len(claim.citations)::INTEGER AS n_citations
FROM claims
ORDER BY answer_id, claim_index
