-- Purpose: inter-annotator agreement rows for the report, as the support stage wrote them:
-- Krippendorff's alpha per stratum, Cohen's kappa per annotator pair, grader vs adjudicated
-- human agreement and confusion counts. An undefined statistic keeps value null and a note.
-- Grain: one row per agreement row. Input: annotation_agreement.
SELECT
    stratum::VARCHAR AS stratum,
    statistic::VARCHAR AS statistic,
    annotator_a::VARCHAR AS annotator_a,
    annotator_b::VARCHAR AS annotator_b,
    label_a::VARCHAR AS label_a,
    label_b::VARCHAR AS label_b,
    value::DOUBLE AS value,
    n::BIGINT AS n,
    note::VARCHAR AS note
FROM annotation_agreement
ORDER BY statistic, stratum <> 'overall', stratum, annotator_a NULLS FIRST,
    annotator_b NULLS FIRST, label_a NULLS FIRST, label_b NULLS FIRST
