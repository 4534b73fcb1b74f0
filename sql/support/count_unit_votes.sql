-- Purpose: the value counts Krippendorff's alpha is computed from: human votes per label for
-- each item of each stratum (grader rows excluded: a grader is never part of human gold), with
-- a dense unit number per stratum and the label's code (0-4 in the support rubric's order, $labels).
-- Grain: one row per (stratum, item, label). Input: agreement_rows.
SELECT stratum,
    (dense_rank() OVER (PARTITION BY stratum ORDER BY item) - 1)::BIGINT AS unit,
    (list_position($labels::VARCHAR[], label) - 1)::BIGINT AS code,
    votes
FROM (
    SELECT stratum, item, label, count(*)::BIGINT AS votes
    FROM agreement_rows
    WHERE is_human
    GROUP BY ALL
)
ORDER BY stratum, unit, code
