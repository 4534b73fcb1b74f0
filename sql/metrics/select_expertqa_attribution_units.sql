-- Purpose: units of ExpertQA's attribution figure (Malaviya et al. 2024): claims judged
-- against all their evidence; 1 when labelled "Complete", 0 for "Partial", "Incomplete" or
-- "Missing"; "N/A" (no judgment of support) and claims whose annotators gave different
-- labels are unresolved, beside. Reads the source's own labels (raw_label), not our mapping.
-- Grain: one row per claim with a claim-level judgment of schema expertqa. Inputs:
-- support_judgments, answers (strata).
WITH judged AS (
    SELECT claim_id, any_value(answer_id) AS answer_id,
        count(DISTINCT raw_label) AS n_labels, min(raw_label) AS raw_label
    FROM support_judgments
    WHERE schema = 'expertqa' AND citation_id IS NULL AND is_human
    GROUP BY claim_id
)
SELECT
    'expertqa_attribution' AS metric,
    j.claim_id AS unit_id,
    j.answer_id,
    a.query_id,
    coalesce(a.engine, 'unknown') AS engine,
    coalesce(a.domain, 'unknown') AS domain,
    coalesce(a.risk_band, 'unknown') AS risk_band,
    a.inclusion_prob,
    CASE
        WHEN a.answer_id IS NULL OR j.n_labels > 1 THEN NULL
        WHEN j.raw_label = 'Complete' THEN 1.0
        WHEN j.raw_label IN ('Partial', 'Incomplete', 'Missing') THEN 0.0
    END AS y,
    CASE
        WHEN a.answer_id IS NULL THEN 'answer_not_on_date'
        WHEN j.n_labels > 1 THEN 'annotators_disagree'
        ELSE j.raw_label
    END AS category
FROM judged AS j
LEFT JOIN answers AS a ON a.answer_id = j.answer_id
