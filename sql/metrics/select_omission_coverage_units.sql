-- Purpose: units of omission complete-case coverage: every current tuple; 1 when R_O is
-- resolved (0 or 1), 0 when it is null. The share of tuples the omission rate stands on.
-- Grain: one row per tuple_digest. Inputs: omission_endpoints, answers (strata).
SELECT
    'omission_complete_case_coverage' AS metric,
    o.tuple_digest AS unit_id,
    a.answer_id,
    a.query_id,
    a.engine,
    a.domain,
    a.risk_band,
    a.inclusion_prob,
    (o.r_o IS NOT NULL)::DOUBLE AS y,
    CASE WHEN o.r_o IS NULL THEN 'unresolved' ELSE 'resolved' END AS category
FROM omission_endpoints AS o
JOIN answers AS a USING (answer_id)
