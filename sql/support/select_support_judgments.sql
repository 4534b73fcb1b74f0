-- Purpose: the `support_judgments` table of one observation date: every accepted annotation
-- row with its raw label and its verdict under the run's codebook (the support rubric's five,
-- docs/references.md#support-rubric).
-- Grain: one row per accepted annotation row. Input: classified (classify_annotations).
SELECT
    answer_id, claim_id, citation_id, atom_id,
    CASE WHEN citation_id IS NULL THEN 'claim' ELSE 'citation' END AS grain,
    annotator_id, grader, grader = 'human' AS is_human,
    schema, raw_label, label AS verdict, evidence_span, annotated_at, codebook_version,
    file AS source_file, line AS source_line
FROM classified
WHERE reason IS NULL AND observation_date = $date
ORDER BY claim_id, citation_id NULLS FIRST, atom_id NULLS FIRST, annotator_id
