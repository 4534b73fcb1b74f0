-- Purpose: inter-annotator agreement rows for the report (Krippendorff's alpha, Cohen's kappa
-- per annotator pair, grader-vs-human confusion), as the support stage wrote them.
-- Grain: one row per agreement row. Input: annotation_agreement.
SELECT
    stratum::VARCHAR AS stratum,
    statistic::VARCHAR AS statistic,
    annotator_a::VARCHAR AS annotator_a,
    annotator_b::VARCHAR AS annotator_b,
    value::DOUBLE AS value,
    n::BIGINT AS n
FROM annotation_agreement
ORDER BY statistic, stratum, annotator_a NULLS FIRST, annotator_b NULLS FIRST
