-- Purpose: units of citation precision (Liu et al. 2023, as the demo codebook defines it):
-- a citation is precise when it fully or partially supports its claim; unsupported or
-- contradicted = 0; unresolved pairs are reported beside the rate.
-- A label that rests on a grader alone (basis grader_only) is not a human review: it is
-- reported beside the rate (category grader_only), never in it.
-- A unit whose answer is not among the date's answers is unresolved (answer_not_on_date),
-- never dropped.
-- Grain: one row per (claim_id, citation_id); claim-level rows (citation_id null) are
-- not pairs. Inputs: support_labels, answers (strata).
SELECT
    'citation_precision' AS metric,
    s.claim_id || '/' || s.citation_id AS unit_id,
    s.answer_id,
    a.query_id,
    coalesce(a.engine, 'unknown') AS engine,
    coalesce(a.domain, 'unknown') AS domain,
    coalesce(a.risk_band, 'unknown') AS risk_band,
    a.inclusion_prob,
    CASE WHEN a.answer_id IS NOT NULL THEN (
        CASE
            WHEN s.basis = 'grader_only' THEN NULL
            WHEN s.label IN ('fully_supported', 'partially_supported') THEN 1.0
            WHEN s.label IN ('unsupported', 'contradicted') THEN 0.0
        END
    ) END AS y,
    CASE WHEN a.answer_id IS NULL THEN 'answer_not_on_date' ELSE (
        CASE WHEN s.basis = 'grader_only' THEN 'grader_only'
            ELSE coalesce(s.label, 'no_label') END
    ) END AS category
FROM support_labels AS s
LEFT JOIN answers AS a ON a.answer_id = s.answer_id
WHERE s.citation_id IS NOT NULL
