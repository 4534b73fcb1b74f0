-- Purpose: units of citation recall (Liu et al. 2023; ALCE): verification-worthy claims;
-- 1 when the claim's citations together fully support it, 0 when they do not or when the
-- claim has no citation; unresolved when its worthiness is unknown, when it is cited but no
-- pair was reviewed, or when its claim-level label is unresolved.
-- Grain: one row per claim with verification_worthy true or null. Inputs: claims,
-- claim_labels (the pairs aggregated per claim), answers (strata).
SELECT
    'citation_recall' AS metric,
    c.claim_id AS unit_id,
    a.answer_id,
    a.query_id,
    a.engine,
    a.domain,
    a.risk_band,
    a.inclusion_prob,
    CASE
        WHEN c.verification_worthy IS NULL THEN NULL
        WHEN c.n_citations = 0 THEN 0.0
        WHEN l.label = 'fully_supported' THEN 1.0
        WHEN l.label IN ('partially_supported', 'unsupported', 'contradicted') THEN 0.0
    END AS y,
    CASE
        WHEN c.verification_worthy IS NULL THEN 'worthiness_unknown'
        WHEN c.n_citations = 0 THEN 'uncited'
        WHEN l.label IS NULL THEN 'not_reviewed'
        ELSE l.label
    END AS category
FROM claims AS c
JOIN answers AS a USING (answer_id)
LEFT JOIN claim_labels AS l USING (claim_id)
WHERE c.verification_worthy IS DISTINCT FROM false
