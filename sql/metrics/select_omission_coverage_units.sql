-- Purpose: units of omission complete-case coverage: every current tuple; 1 when R_O is
-- resolved (0 or 1), 0 when it is null. The share of tuples the omission rate stands on.
-- A unit whose answer is not among the date's answers is unresolved (answer_not_on_date),
-- never dropped.
-- Grain: one row per tuple_digest. Inputs: omission_endpoints, answers (strata).
SELECT
    'omission_complete_case_coverage' AS metric,
    o.tuple_digest AS unit_id,
    o.answer_id,
    a.query_id,
    coalesce(a.engine, 'unknown') AS engine,
    coalesce(a.domain, 'unknown') AS domain,
    coalesce(a.risk_band, 'unknown') AS risk_band,
    a.inclusion_prob,
    CASE WHEN a.answer_id IS NOT NULL THEN (
        (o.r_o IS NOT NULL)::DOUBLE
    ) END AS y,
    CASE WHEN a.answer_id IS NULL THEN 'answer_not_on_date' ELSE (
        CASE WHEN o.r_o IS NULL THEN 'unresolved' ELSE 'resolved' END
    ) END AS category
FROM omission_endpoints AS o
LEFT JOIN answers AS a ON a.answer_id = o.answer_id
