-- Purpose: units of the coverage of verification-worthy claims (the support rubric,
-- docs/references.md#support-rubric: uncited factual claims are reviewed separately, not hidden by a rate over cited pairs): 1 when the claim
-- has a citation, 0 when it has none; a null worthiness flag is unresolved.
-- Grain: one row per claim with verification_worthy true or null. Inputs: claims, answers.
SELECT
    'verification_coverage' AS metric,
    c.claim_id AS unit_id,
    a.answer_id,
    a.query_id,
    a.engine,
    a.domain,
    a.risk_band,
    a.inclusion_prob,
    CASE WHEN c.verification_worthy THEN (c.n_citations > 0)::DOUBLE END AS y,
    CASE
        WHEN c.verification_worthy IS NULL THEN 'worthiness_unknown'
        WHEN c.n_citations > 0 THEN 'cited'
        ELSE 'uncited'
    END AS category
FROM claims AS c
JOIN answers AS a USING (answer_id)
WHERE c.verification_worthy IS DISTINCT FROM false
