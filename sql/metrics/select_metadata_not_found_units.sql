-- Purpose: units of the L3 not-found rate: records the registry answered for; verdict
-- not_found (a 404: fabricated identifier) = 1, consistent or mismatch = 0; unmatched or
-- unresolved (or no verdict) = unresolved.
-- Strata, and a unit whose answer is not among the date's answers: the shared strata join
-- (create_stratified_macro.sql).
-- Grain: one row per metadata check. Inputs: metadata_checks, answers (strata).
WITH judged AS (
    SELECT
        'metadata_not_found_rate' AS metric,
        m.citation_id AS unit_id,
        m.answer_id,
        CASE
            WHEN m.verdict = 'not_found' THEN 1.0
            WHEN m.verdict IN ('consistent', 'mismatch') THEN 0.0
        END AS y,
        coalesce(m.verdict, 'no_verdict') AS category
    FROM metadata_checks AS m
)
SELECT * FROM stratified(judged)
