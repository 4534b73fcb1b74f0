-- Purpose: units of the omission rate (seed 000): current tuples; y = R_O (1 or 0), null R_O
-- (a predicate unresolved) is unresolved; the category is the tuple's policy action.
-- A unit whose answer is not among the date's answers is unresolved (answer_not_on_date),
-- never dropped.
-- Grain: one row per tuple_digest. Inputs: omission_endpoints, answers (strata).
SELECT
    'omission_rate' AS metric,
    o.tuple_digest AS unit_id,
    o.answer_id,
    a.query_id,
    coalesce(a.engine, 'unknown') AS engine,
    coalesce(a.domain, 'unknown') AS domain,
    coalesce(a.risk_band, 'unknown') AS risk_band,
    a.inclusion_prob,
    CASE WHEN a.answer_id IS NOT NULL THEN (
        o.r_o::DOUBLE
    ) END AS y,
    CASE WHEN a.answer_id IS NULL THEN 'answer_not_on_date' ELSE (
        coalesce(o.policy_action, 'no_action')
    ) END AS category
FROM omission_endpoints AS o
LEFT JOIN answers AS a ON a.answer_id = o.answer_id
