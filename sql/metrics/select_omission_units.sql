-- Purpose: units of the omission rate (the source-risk audit specification,
-- docs/references.md#source-risk-audit): current tuples; y = R_O (1 or 0), null R_O (a
-- predicate unresolved) is unresolved; the category is the tuple's policy action.
-- Strata, and a unit whose answer is not among the date's answers: the shared strata join
-- (create_stratified_macro.sql).
-- Grain: one row per tuple_digest. Inputs: omission_endpoints, answers (strata).
WITH judged AS (
    SELECT
        'omission_rate' AS metric,
        o.tuple_digest AS unit_id,
        o.answer_id,
        o.r_o::DOUBLE AS y,
        coalesce(o.policy_action, 'no_action') AS category
    FROM omission_endpoints AS o
)
SELECT * FROM stratified(judged)
