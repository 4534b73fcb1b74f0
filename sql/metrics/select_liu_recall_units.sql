-- Purpose: units of citation recall as Liu, Zhang & Liang (2023, §2.3) define it: the share
-- of verification-worthy statements fully supported by their citations taken together. 1
-- when the statement's combined label is fully_supported; 0 for every other human judgment
-- (partial, unsupported, contradicted, and unresolved: Liu's "Citations Contradict Each
-- Other" counts as not supported) and for a statement with no citation. Unresolved, beside:
-- worthiness unknown, and cited statements with no human judgment (not reviewed, or labelled
-- by a grader alone): the paper's definition presumes a judgment exists.
-- Grain: one row per claim with verification_worthy true or null. Inputs: claims,
-- claim_labels, answers (strata).
SELECT
    'liu_citation_recall' AS metric,
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
        WHEN l.human_judged THEN 0.0
    END AS y,
    CASE
        WHEN c.verification_worthy IS NULL THEN 'worthiness_unknown'
        WHEN c.n_citations = 0 THEN 'uncited'
        WHEN l.label IS NULL THEN 'not_reviewed'
        WHEN NOT l.human_judged THEN 'grader_only'
        WHEN l.label = 'unresolved' THEN 'unresolved: counts as not supported'
        ELSE l.label
    END AS category
FROM claims AS c
JOIN answers AS a USING (answer_id)
LEFT JOIN claim_labels AS l USING (claim_id)
WHERE c.verification_worthy IS DISTINCT FROM false
