-- Purpose: units of the omission rate (seed 000): current tuples; y = R_O (1 or 0), null R_O
-- (a predicate unresolved) is unresolved; the category is the tuple's policy action.
-- Grain: one row per tuple_digest. Inputs: omission_endpoints, answers (strata).
SELECT
    'omission_rate' AS metric,
    o.tuple_digest AS unit_id,
    a.answer_id,
    a.query_id,
    a.engine,
    a.domain,
    a.risk_band,
    a.inclusion_prob,
    o.r_o::DOUBLE AS y,
    coalesce(o.policy_action, 'no_action') AS category
FROM omission_endpoints AS o
JOIN answers AS a USING (answer_id)
