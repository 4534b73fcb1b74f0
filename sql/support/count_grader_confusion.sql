-- Purpose: grader vs adjudicated human labels: for each grader, the count of items by (grader
-- label, human gold label), over items with a human, non-tied, single-atom gold.
-- Grain: one row per (stratum, grader, label_a, label_b). Input: agreement_rows.
SELECT stratum, annotator_id AS grader, label AS label_a, gold AS label_b,
    count(*)::INTEGER AS n
FROM agreement_rows
WHERE NOT is_human AND gold IS NOT NULL
GROUP BY ALL
ORDER BY ALL
