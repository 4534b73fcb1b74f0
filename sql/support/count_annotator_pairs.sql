-- Purpose: the contingency counts of pairwise Cohen's kappa: for every pair of human
-- annotators (a < b) and every item both judged, their two labels.
-- Grain: one row per (stratum, annotator_a, annotator_b, label_a, label_b). Input:
-- agreement_rows.
SELECT x.stratum, x.annotator_id AS annotator_a, y.annotator_id AS annotator_b,
    x.label AS label_a, y.label AS label_b, count(*)::INTEGER AS n
FROM agreement_rows AS x
JOIN agreement_rows AS y
    ON x.stratum = y.stratum AND x.item = y.item AND x.annotator_id < y.annotator_id
WHERE x.is_human AND y.is_human
GROUP BY ALL
ORDER BY ALL
