-- Purpose: the `review_sample` table: every pair of the drawn review sample with its design
-- (stratum, stratum size and sample size, inclusion probability) and what people and the
-- grader said of it (the grader the sample was drawn with; outside the sample, the
-- codebook's primary grader $grader); and every pair people labelled outside the sample, kept and
-- shown (in_sample false, no inclusion probability) but never used for design-based rates.
-- status: labelled (a resolved human verdict), label_unresolved (people judged it, the
-- verdict is unresolved: outside the rate's denominator), awaiting_label (drawn,
-- not yet judged by a person), outside_sample.
-- Grain: one row per (claim_id, citation_id). Inputs: sample (the sample file of this date ×
-- codebook; empty when none was drawn), labels (support_labels), graded (grader_judgments).
WITH human AS (
    SELECT claim_id, citation_id, answer_id, engine, domain, verdict
    FROM labels
    WHERE basis = 'human' AND citation_id IS NOT NULL
),
drawn AS (
    SELECT s.sample_id, s.claim_id, s.citation_id, s.answer_id, s.engine, s.domain,
        TRUE AS in_sample, s.stratum, s.stratum_size, s.stratum_sample, s.inclusion_prob,
        s.grader, s.grader_label AS sampled_grader_verdict, h.verdict AS human_verdict
    FROM sample AS s
    LEFT JOIN human AS h USING (claim_id, citation_id)
),
outside AS (
    SELECT NULL::VARCHAR AS sample_id, h.claim_id, h.citation_id, h.answer_id, h.engine,
        h.domain, FALSE AS in_sample, NULL::VARCHAR AS stratum, NULL::BIGINT AS stratum_size,
        NULL::BIGINT AS stratum_sample, NULL::DOUBLE AS inclusion_prob, NULL::VARCHAR AS grader,
        NULL::VARCHAR AS sampled_grader_verdict, h.verdict AS human_verdict
    FROM human AS h
    WHERE NOT EXISTS (SELECT 1 FROM sample AS s
                      WHERE s.claim_id = h.claim_id AND s.citation_id = h.citation_id)
)
SELECT u.*, g.verdict AS grader_verdict,
    CASE
        WHEN NOT u.in_sample THEN 'outside_sample'
        WHEN u.human_verdict IS NULL THEN 'awaiting_label'
        WHEN u.human_verdict = 'unresolved' THEN 'label_unresolved'
        ELSE 'labelled'
    END AS status
FROM (SELECT * FROM drawn UNION ALL SELECT * FROM outside) AS u
LEFT JOIN graded AS g
    ON g.claim_id = u.claim_id AND g.citation_id = u.citation_id
    AND g.grader = coalesce(u.grader, $grader)
ORDER BY u.claim_id, u.citation_id
