-- Purpose: units of the quote-found rate (L2 mechanical): every passage check; verdict
-- located, shifted or normalized = 1, absent = 0, unresolved (no page text) = unresolved.
-- Strata, and a unit whose answer is not among the date's answers: the shared strata join
-- (create_stratified_macro.sql).
-- Grain: one row per citation with a quote. Inputs: passage_checks, answers (strata).
WITH judged AS (
    SELECT
        'quote_found_rate' AS metric,
        p.citation_id AS unit_id,
        p.answer_id,
        CASE
            WHEN p.verdict IN ('located', 'shifted', 'normalized') THEN 1.0
            WHEN p.verdict = 'absent' THEN 0.0
        END AS y,
        coalesce(p.verdict, 'no_verdict') AS category
    FROM passage_checks AS p
)
SELECT * FROM stratified(judged)
