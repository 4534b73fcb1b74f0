-- Purpose: units of the L3 metadata mismatch rate: records the registry found; verdict
-- mismatch = 1, consistent = 0; unmatched or unresolved (or no verdict) = unresolved, never a
-- mismatch. not_found records have their own rate and are left out here.
-- Strata, and a unit whose answer is not among the date's answers: the shared strata join
-- (create_stratified_macro.sql).
-- Grain: one row per metadata check except not_found. Inputs: metadata_checks, answers.
WITH judged AS (
    SELECT
        'metadata_mismatch_rate' AS metric,
        m.citation_id AS unit_id,
        m.answer_id,
        CASE m.verdict WHEN 'mismatch' THEN 1.0 WHEN 'consistent' THEN 0.0 END AS y,
        coalesce(m.verdict, 'no_verdict') AS category
    FROM metadata_checks AS m
    WHERE m.verdict IS DISTINCT FROM 'not_found'
)
SELECT * FROM stratified(judged)
