-- Purpose: units of the quote-found rate (L2 mechanical): every passage check; located,
-- shifted or normalized = 1, absent = 0, unresolved (no page text) = unresolved.
-- A unit whose answer is not among the date's answers is unresolved (answer_not_on_date),
-- never dropped.
-- Grain: one row per citation with a quote. Inputs: passage_checks, answers (strata).
SELECT
    'quote_found_rate' AS metric,
    p.citation_id AS unit_id,
    p.answer_id,
    a.query_id,
    coalesce(a.engine, 'unknown') AS engine,
    coalesce(a.domain, 'unknown') AS domain,
    coalesce(a.risk_band, 'unknown') AS risk_band,
    a.inclusion_prob,
    CASE WHEN a.answer_id IS NOT NULL THEN (
        CASE
            WHEN p.status IN ('located', 'shifted', 'normalized') THEN 1.0
            WHEN p.status = 'absent' THEN 0.0
        END
    ) END AS y,
    CASE WHEN a.answer_id IS NULL THEN 'answer_not_on_date' ELSE (
        coalesce(p.status, 'no_status')
    ) END AS category
FROM passage_checks AS p
LEFT JOIN answers AS a ON a.answer_id = p.answer_id
