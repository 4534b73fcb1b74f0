-- Purpose: units of the L3 metadata mismatch rate: records the registry found; mismatch = 1,
-- consistent = 0; unmatched or unresolvable (or an unknown outcome) = unresolved, never a
-- mismatch. not_found records have their own rate and are left out here.
-- Grain: one row per metadata check except not_found. Inputs: metadata_checks, answers.
SELECT
    'metadata_mismatch_rate' AS metric,
    m.citation_id AS unit_id,
    a.answer_id,
    a.query_id,
    a.engine,
    a.domain,
    a.risk_band,
    a.inclusion_prob,
    CASE m.outcome WHEN 'mismatch' THEN 1.0 WHEN 'consistent' THEN 0.0 END AS y,
    coalesce(m.outcome, 'no_outcome') AS category
FROM metadata_checks AS m
JOIN answers AS a USING (answer_id)
WHERE m.outcome IS DISTINCT FROM 'not_found'
