-- Purpose: units of citation precision, fail-closed variant: Liu et al.'s (2023) counting
-- rule with unknowns set aside. A citation is precise when it fully supports its claim, or
-- when it partially supports it, the claim's citations together fully support the claim and
-- no single citation fully supports it alone (then the partial citations are needed);
-- unsupported or contradicted = 0, a partial citation of a claim whose citations together do
-- not fully support it (or that another citation fully supports) = 0. Unresolved, reported
-- beside: pairs adjudicated unresolved (evidence inaccessible, unclear, tie), partial pairs of
-- a claim whose combined support is unresolved or unknown, and grader-only verdicts (no human
-- review; category grader_only). Strata, and a unit whose answer is not among the date's
-- answers: the shared strata join (create_stratified_macro.sql).
-- Grain: one row per (claim_id, citation_id); claim-grain rows (citation_id null) are
-- not pairs. Inputs: support_labels, claim_labels (the claim's combined label), answers.
WITH any_full AS (
    SELECT claim_id,
        bool_or(verdict = 'fully_supported' AND basis IS DISTINCT FROM 'grader_only') AS full
    FROM support_labels
    WHERE citation_id IS NOT NULL
    GROUP BY claim_id
),
judged AS (
    SELECT
        'citation_precision' AS metric,
        s.claim_id || '/' || s.citation_id AS unit_id,
        s.answer_id,
        CASE
            WHEN s.basis = 'grader_only' THEN NULL
            WHEN s.verdict = 'fully_supported' THEN 1.0
            WHEN s.verdict IN ('unsupported', 'contradicted') THEN 0.0
            WHEN s.verdict = 'partially_supported' THEN (
                CASE
                    WHEN f.full THEN 0.0
                    WHEN l.label = 'fully_supported' THEN 1.0
                    WHEN l.label IN ('partially_supported', 'unsupported', 'contradicted')
                        THEN 0.0
                END
            )
        END AS y,
        CASE
            WHEN s.basis = 'grader_only' THEN 'grader_only'
            WHEN s.verdict = 'partially_supported' THEN (
                CASE
                    WHEN f.full THEN 'partial: another citation fully supports'
                    WHEN l.label = 'fully_supported' THEN 'partial: needed for full support'
                    WHEN l.label IN ('partially_supported', 'unsupported', 'contradicted')
                        THEN 'partial: claim not fully supported'
                    ELSE 'partial: combined support unresolved'
                END
            )
            ELSE coalesce(s.verdict, 'no_label')
        END AS category
    FROM support_labels AS s
    LEFT JOIN any_full AS f ON f.claim_id = s.claim_id
    LEFT JOIN claim_labels AS l ON l.claim_id = s.claim_id
    WHERE s.citation_id IS NOT NULL
)
SELECT * FROM stratified(judged)
