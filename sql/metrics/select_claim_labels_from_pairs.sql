-- Purpose: a claim-level support label for citation recall: a claim-grain row of
-- support_labels (citation_id null: the claim judged against its citations together) wins; otherwise the pairs decide: the citations together fully support
-- the claim when any pair is fully_supported; else unresolved when any pair is unresolved (it
-- might be supported); else the worst resolved verdict (contradicted > unsupported > partial).
-- A grader-only verdict (basis grader_only) is no human review: it counts as unresolved.
-- `human_judged` says whether any human judgment went into the label (false: the claim was
-- labelled by a grader alone, so it has no human judgment at all).
-- Grain: one row per claim_id with at least one adjudicated row. Input: support_labels.
WITH reviewed AS (
    SELECT
        claim_id,
        citation_id,
        basis IS DISTINCT FROM 'grader_only' AS human,
        CASE WHEN basis = 'grader_only' THEN 'unresolved' ELSE verdict END AS label
    FROM support_labels
),
claim_level AS (
    SELECT claim_id, min(label) AS label, count(DISTINCT label) AS n_labels,
        bool_or(human) AS human_judged
    FROM reviewed
    WHERE citation_id IS NULL
    GROUP BY claim_id
),
pairs AS (
    SELECT
        claim_id,
        CASE
            WHEN bool_or(label = 'fully_supported') THEN 'fully_supported'
            WHEN bool_or(label NOT IN ('partially_supported', 'unsupported', 'contradicted')
                OR label IS NULL) THEN 'unresolved'
            WHEN bool_or(label = 'contradicted') THEN 'contradicted'
            WHEN bool_or(label = 'unsupported') THEN 'unsupported'
            ELSE 'partially_supported'
        END AS label,
        bool_or(human) AS human_judged
    FROM reviewed
    WHERE citation_id IS NOT NULL
    GROUP BY claim_id
)
SELECT
    claim_id,
    CASE
        WHEN c.n_labels > 1 THEN 'unresolved'
        ELSE coalesce(c.label, p.label)
    END AS label,
    coalesce(c.human_judged, false) OR coalesce(p.human_judged, false) AS human_judged
FROM claim_level AS c
FULL JOIN pairs AS p USING (claim_id)
ORDER BY claim_id
