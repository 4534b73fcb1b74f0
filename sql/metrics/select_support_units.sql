-- Purpose: units of the full-support rate (seed 003): every adjudicated claim-citation pair;
-- fully_supported = 1; partially_supported, unsupported, contradicted = 0 (in the
-- denominator, never the numerator); unresolved = unresolved, reported beside.
-- A label that rests on a grader alone (basis grader_only) is not a human review: it is
-- reported beside the rate (category grader_only), never in it.
-- A unit whose answer is not among the date's answers is unresolved (answer_not_on_date),
-- never dropped.
-- Grain: one row per (claim_id, citation_id); claim-level rows (citation_id null) are
-- not pairs. Inputs: support_labels, answers (strata).
SELECT
    'full_support_rate' AS metric,
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
            WHEN s.label = 'fully_supported' THEN 1.0
            WHEN s.label IN ('partially_supported', 'unsupported', 'contradicted') THEN 0.0
        END
    ) END AS y,
    CASE WHEN a.answer_id IS NULL THEN 'answer_not_on_date' ELSE (
        CASE WHEN s.basis = 'grader_only' THEN 'grader_only'
            ELSE coalesce(s.label, 'no_label') END
    ) END AS category
FROM support_labels AS s
LEFT JOIN answers AS a ON a.answer_id = s.answer_id
WHERE s.citation_id IS NOT NULL
