-- Purpose: units of omission complete-case coverage: every current tuple; 1 when R_O is
-- resolved (0 or 1), 0 when it is null. The share of tuples the omission rate stands on.
-- Strata, and a unit whose answer is not among the date's answers: the shared strata join
-- (create_stratified_macro.sql).
-- Grain: one row per tuple_digest. Inputs: omission_endpoints, answers (strata).
WITH judged AS (
    SELECT
        'omission_complete_case_coverage' AS metric,
        o.tuple_digest AS unit_id,
        o.answer_id,
        (o.r_o IS NOT NULL)::DOUBLE AS y,
        CASE WHEN o.r_o IS NULL THEN 'unresolved' ELSE 'resolved' END AS category
    FROM omission_endpoints AS o
)
SELECT * FROM stratified(judged)
