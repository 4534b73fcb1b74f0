-- Purpose: units of the L3 not-found rate: records the registry answered for; not_found (a
-- 404: fabricated identifier) = 1, consistent or mismatch = 0; unmatched or unresolvable (or
-- an unknown outcome) = unresolved.
-- Grain: one row per metadata check. Inputs: metadata_checks, answers (strata).
SELECT
    'metadata_not_found_rate' AS metric,
    m.citation_id AS unit_id,
    a.answer_id,
    a.query_id,
    a.engine,
    a.domain,
    a.risk_band,
    a.inclusion_prob,
    CASE
        WHEN m.outcome = 'not_found' THEN 1.0
        WHEN m.outcome IN ('consistent', 'mismatch') THEN 0.0
    END AS y,
    coalesce(m.outcome, 'no_outcome') AS category
FROM metadata_checks AS m
JOIN answers AS a USING (answer_id)
