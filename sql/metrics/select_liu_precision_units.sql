-- Purpose: units of citation precision as Liu, Zhang & Liang (2023, §2.4) define it:
-- (T_fs + T_ps) / N over the judged citations. A citation counts when it fully supports its
-- statement, or when it partially supports it, the statement is fully supported by the union
-- of its citations and no single citation fully supports it. Every other judged citation is
-- 0, including those adjudicated unresolved (Liu's "Citation Inaccessible" and "Statement is
-- Unclear" count as not supporting; so does an annotator tie). Unresolved, beside: only
-- citations with no human judgment (grader-only verdicts) and units whose answer is not among
-- the date's answers (the shared strata join, create_stratified_macro.sql).
-- Grain: one row per (claim_id, citation_id) judged. Inputs: support_labels, claim_labels
-- (the statement's combined label), answers (strata).
WITH any_full AS (
    SELECT claim_id,
        bool_or(verdict = 'fully_supported' AND basis IS DISTINCT FROM 'grader_only') AS full
    FROM support_labels
    WHERE citation_id IS NOT NULL
    GROUP BY claim_id
),
judged AS (
    SELECT
        'liu_citation_precision' AS metric,
        s.claim_id || '/' || s.citation_id AS unit_id,
        s.answer_id,
        CASE WHEN s.basis IS DISTINCT FROM 'grader_only' THEN (
            CASE
                WHEN s.verdict = 'fully_supported' THEN 1.0
                WHEN s.verdict = 'partially_supported' AND l.label = 'fully_supported'
                    AND NOT coalesce(f.full, false) THEN 1.0
                ELSE 0.0
            END
        ) END AS y,
        CASE
            WHEN s.basis = 'grader_only' THEN 'grader_only'
            WHEN s.verdict = 'partially_supported' AND l.label = 'fully_supported'
                AND NOT coalesce(f.full, false) THEN 'partial: needed for full support'
            WHEN s.verdict = 'partially_supported' THEN 'partial: not counted'
            WHEN s.verdict = 'unresolved' THEN 'unresolved: counts as not supporting'
            ELSE coalesce(s.verdict, 'no_label')
        END AS category
    FROM support_labels AS s
    LEFT JOIN any_full AS f ON f.claim_id = s.claim_id
    LEFT JOIN claim_labels AS l ON l.claim_id = s.claim_id
    WHERE s.citation_id IS NOT NULL
)
SELECT * FROM stratified(judged)
