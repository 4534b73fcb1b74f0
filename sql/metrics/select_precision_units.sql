-- Purpose: units of citation precision (Liu et al. 2023, as the demo codebook defines it):
-- a citation is precise when it fully or partially supports its claim; unsupported or
-- contradicted = 0; unresolved pairs are reported beside the rate.
-- A label that rests on a grader alone (basis grader_only) is not a human review: it is
-- reported beside the rate (category grader_only), never in it.
-- Grain: one row per (claim_id, citation_id); claim-level rows (citation_id null) are not pairs. Inputs: support_labels, answers (strata).
SELECT
    'citation_precision' AS metric,
    s.claim_id || '/' || s.citation_id AS unit_id,
    a.answer_id,
    a.query_id,
    a.engine,
    a.domain,
    a.risk_band,
    a.inclusion_prob,
    CASE
        WHEN s.basis = 'grader_only' THEN NULL
        WHEN s.label IN ('fully_supported', 'partially_supported') THEN 1.0
        WHEN s.label IN ('unsupported', 'contradicted') THEN 0.0
    END AS y,
    CASE WHEN s.basis = 'grader_only' THEN 'grader_only'
        ELSE coalesce(s.label, 'no_label') END AS category
FROM support_labels AS s
JOIN answers AS a USING (answer_id)
WHERE s.citation_id IS NOT NULL
