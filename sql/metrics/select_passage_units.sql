-- Purpose: units of the quote-found rate (L2 mechanical): every passage check; located,
-- shifted or normalized = 1, absent = 0, unresolved (no page text) = unresolved.
-- Grain: one row per citation with a quote. Inputs: passage_checks, answers (strata).
SELECT
    'quote_found_rate' AS metric,
    p.citation_id AS unit_id,
    a.answer_id,
    a.query_id,
    a.engine,
    a.domain,
    a.risk_band,
    a.inclusion_prob,
    CASE
        WHEN p.status IN ('located', 'shifted', 'normalized') THEN 1.0
        WHEN p.status = 'absent' THEN 0.0
    END AS y,
    coalesce(p.status, 'no_status') AS category
FROM passage_checks AS p
JOIN answers AS a USING (answer_id)
