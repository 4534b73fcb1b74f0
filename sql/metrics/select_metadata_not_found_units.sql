-- Purpose: units of the L3 not-found rate: records the registry answered for; not_found (a
-- 404: fabricated identifier) = 1, consistent or mismatch = 0; unmatched or unresolvable (or
-- an unknown outcome) = unresolved.
-- A unit whose answer is not among the date's answers is unresolved (answer_not_on_date),
-- never dropped.
-- Grain: one row per metadata check. Inputs: metadata_checks, answers (strata).
SELECT
    'metadata_not_found_rate' AS metric,
    m.citation_id AS unit_id,
    m.answer_id,
    a.query_id,
    coalesce(a.engine, 'unknown') AS engine,
    coalesce(a.domain, 'unknown') AS domain,
    coalesce(a.risk_band, 'unknown') AS risk_band,
    a.inclusion_prob,
    CASE WHEN a.answer_id IS NOT NULL THEN (
        CASE
            WHEN m.outcome = 'not_found' THEN 1.0
            WHEN m.outcome IN ('consistent', 'mismatch') THEN 0.0
        END
    ) END AS y,
    CASE WHEN a.answer_id IS NULL THEN 'answer_not_on_date' ELSE (
        coalesce(m.outcome, 'no_outcome')
    ) END AS category
FROM metadata_checks AS m
LEFT JOIN answers AS a ON a.answer_id = m.answer_id
