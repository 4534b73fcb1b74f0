-- Purpose: units of the full-support rate (the support rubric,
-- docs/references.md#support-rubric): every adjudicated claim-citation pair; verdict
-- fully_supported = 1; partially_supported, unsupported, contradicted = 0 (in the
-- denominator, never the numerator); unresolved = unresolved, reported beside.
-- A verdict that rests on a grader alone (basis grader_only) is not a human review: it is
-- reported beside the rate (category grader_only), never in it.
-- Strata, and a unit whose answer is not among the date's answers: the shared strata join
-- (create_stratified_macro.sql).
-- Grain: one row per (claim_id, citation_id); claim-grain rows (citation_id null) are
-- not pairs. Inputs: support_labels, answers (strata).
WITH judged AS (
    SELECT
        'full_support_rate' AS metric,
        s.claim_id || '/' || s.citation_id AS unit_id,
        s.answer_id,
        CASE
            WHEN s.basis = 'grader_only' THEN NULL
            WHEN s.verdict = 'fully_supported' THEN 1.0
            WHEN s.verdict IN ('partially_supported', 'unsupported', 'contradicted') THEN 0.0
        END AS y,
        CASE WHEN s.basis = 'grader_only' THEN 'grader_only'
            ELSE coalesce(s.verdict, 'no_label') END AS category
    FROM support_labels AS s
    WHERE s.citation_id IS NOT NULL
)
SELECT * FROM stratified(judged)
