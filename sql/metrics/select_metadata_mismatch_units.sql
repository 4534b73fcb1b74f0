-- Purpose: units of the L3 metadata mismatch rate: records the registry found; mismatch = 1,
-- consistent = 0; unmatched or unresolvable (or an unknown outcome) = unresolved, never a
-- mismatch. not_found records have their own rate and are left out here.
-- A unit whose answer is not among the date's answers is unresolved (answer_not_on_date),
-- never dropped.
-- Grain: one row per metadata check except not_found. Inputs: metadata_checks, answers.
SELECT
    'metadata_mismatch_rate' AS metric,
    m.citation_id AS unit_id,
    m.answer_id,
    a.query_id,
    coalesce(a.engine, 'unknown') AS engine,
    coalesce(a.domain, 'unknown') AS domain,
    coalesce(a.risk_band, 'unknown') AS risk_band,
    a.inclusion_prob,
    CASE WHEN a.answer_id IS NOT NULL THEN (
        CASE m.outcome WHEN 'mismatch' THEN 1.0 WHEN 'consistent' THEN 0.0 END
    ) END AS y,
    CASE WHEN a.answer_id IS NULL THEN 'answer_not_on_date' ELSE (
        coalesce(m.outcome, 'no_outcome')
    ) END AS category
FROM metadata_checks AS m
LEFT JOIN answers AS a ON a.answer_id = m.answer_id
WHERE m.outcome IS DISTINCT FROM 'not_found'
