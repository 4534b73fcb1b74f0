-- Purpose: the fail-closed verification rule's per-answer verdict (docs/references.md):
-- verified, or rejected by its first failing claim
-- (lowest claim_index) with that claim's reason. Zero claims is vacuously verified. Only a
-- verified answer is served, so `served` and the token columns feed cost per served answer.
-- Grain: one row per accepted answer. Inputs: answers, claim_checks.
WITH first_failure AS (
    SELECT answer_id,
        min(claim_index) AS claim_index,
        arg_min(claim_id, claim_index) AS claim_id,
        arg_min(reason, claim_index) AS reason
    FROM claim_checks
    WHERE verdict = 'fail'
    GROUP BY answer_id
)
SELECT
    a.answer_id,
    a.query_id,
    a.engine,
    a.domain,
    a.risk_band,
    a.inclusion_prob,
    a.observed_at,
    a.n_claims,
    CASE WHEN f.answer_id IS NULL THEN 'verified' ELSE 'rejected' END AS verdict,
    f.reason,
    f.claim_index,
    f.claim_id,
    a.context_chunk_ids IS NOT NULL AS hallucination_checked,
    f.answer_id IS NULL AS served,
    a.input_tokens,
    a.output_tokens
FROM answers AS a
LEFT JOIN first_failure AS f USING (answer_id)
ORDER BY a.answer_id
