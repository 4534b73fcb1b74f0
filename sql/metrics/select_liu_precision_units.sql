-- Purpose: units of citation precision as Liu, Zhang & Liang (2023, §2.4) define it:
-- (T_fs + T_ps) / N over the judged citations. A citation counts when it fully supports its
-- statement, or when it partially supports it, the statement is fully supported by the union
-- of its citations and no single citation fully supports it. Every other judged citation is
-- 0, including those labelled unresolved (Liu's "Citation Inaccessible" and "Statement is
-- Unclear" count as not supporting; so does an annotator tie). Unresolved, beside: only
-- citations with no human judgment (grader-only labels) and units whose answer is not among
-- the date's answers.
-- Grain: one row per (claim_id, citation_id) judged. Inputs: support_labels, claim_labels
-- (the statement's combined label), answers (strata).
WITH any_full AS (
    SELECT claim_id,
        bool_or(label = 'fully_supported' AND basis IS DISTINCT FROM 'grader_only') AS full
    FROM support_labels
    WHERE citation_id IS NOT NULL
    GROUP BY claim_id
)
SELECT
    'liu_citation_precision' AS metric,
    s.claim_id || '/' || s.citation_id AS unit_id,
    s.answer_id,
    a.query_id,
    coalesce(a.engine, 'unknown') AS engine,
    coalesce(a.domain, 'unknown') AS domain,
    coalesce(a.risk_band, 'unknown') AS risk_band,
    a.inclusion_prob,
    CASE WHEN a.answer_id IS NOT NULL AND s.basis IS DISTINCT FROM 'grader_only' THEN (
        CASE
            WHEN s.label = 'fully_supported' THEN 1.0
            WHEN s.label = 'partially_supported' AND l.label = 'fully_supported'
                AND NOT coalesce(f.full, false) THEN 1.0
            ELSE 0.0
        END
    ) END AS y,
    CASE WHEN a.answer_id IS NULL THEN 'answer_not_on_date' ELSE (
        CASE
            WHEN s.basis = 'grader_only' THEN 'grader_only'
            WHEN s.label = 'partially_supported' AND l.label = 'fully_supported'
                AND NOT coalesce(f.full, false) THEN 'partial: needed for full support'
            WHEN s.label = 'partially_supported' THEN 'partial: not counted'
            WHEN s.label = 'unresolved' THEN 'unresolved: counts as not supporting'
            ELSE coalesce(s.label, 'no_label')
        END
    ) END AS category
FROM support_labels AS s
LEFT JOIN answers AS a ON a.answer_id = s.answer_id
LEFT JOIN any_full AS f ON f.claim_id = s.claim_id
LEFT JOIN claim_labels AS l ON l.claim_id = s.claim_id
WHERE s.citation_id IS NOT NULL
