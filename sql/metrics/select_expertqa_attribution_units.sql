-- Purpose: units of ExpertQA's attribution figure (Malaviya et al. 2024): claims judged
-- against all their evidence; 1 when labelled "Complete", 0 for "Partial", "Incomplete" or
-- "Missing"; "N/A" (no judgment of support) and claims whose annotators gave different
-- labels are unresolved, beside. Reads the source's own labels (raw_label), not our mapping.
-- Strata, and a unit whose answer is not among the date's answers: the shared strata join
-- (create_stratified_macro.sql).
-- Grain: one row per claim with a claim-grain judgment of schema expertqa. Inputs:
-- support_judgments, answers (strata).
WITH judged_claims AS (
    SELECT claim_id, any_value(answer_id) AS answer_id,
        count(DISTINCT raw_label) AS n_labels, min(raw_label) AS raw_label
    FROM support_judgments
    WHERE schema = 'expertqa' AND citation_id IS NULL AND is_human
    GROUP BY claim_id
),
judged AS (
    SELECT
        'expertqa_attribution' AS metric,
        j.claim_id AS unit_id,
        j.answer_id,
        CASE
            WHEN j.n_labels > 1 THEN NULL
            WHEN j.raw_label = 'Complete' THEN 1.0
            WHEN j.raw_label IN ('Partial', 'Incomplete', 'Missing') THEN 0.0
        END AS y,
        CASE WHEN j.n_labels > 1 THEN 'annotators_disagree' ELSE j.raw_label END AS category
    FROM judged_claims AS j
)
SELECT * FROM stratified(judged)
