-- Purpose: the fail-closed verification rule's per-answer verdict (docs/references.md):
-- rejected by its first failing claim (lowest claim_index) with that claim's reason; else
-- unresolved when a claim is unresolved (an uncited sentence of unknown worthiness: the rule
-- does not settle it), with the first such claim; else verified. Zero claims is vacuously
-- verified. Only a verified answer is served, so `served` and the token columns feed cost per
-- served answer.
-- Grain: one row per accepted answer. Inputs: answers, claim_checks.
WITH first_failure AS (
    -- a failing claim outranks an unresolved one; among equals the lowest claim_index
    SELECT answer_id,
        arg_min(claim_index, (verdict <> 'fail', claim_index)) AS claim_index,
        arg_min(claim_id, (verdict <> 'fail', claim_index)) AS claim_id,
        arg_min(reason, (verdict <> 'fail', claim_index)) AS reason,
        arg_min(verdict, (verdict <> 'fail', claim_index)) AS verdict
    FROM claim_checks
    WHERE verdict IN ('fail', 'unresolved')
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
    CASE f.verdict WHEN 'fail' THEN 'rejected' WHEN 'unresolved' THEN 'unresolved'
        ELSE 'verified' END AS verdict,
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
