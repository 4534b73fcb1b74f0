-- Purpose: rejected support-label rows (rejected_annotations) counted by codebook and reason,
-- each with its first example (lowest source_file, source_line): seven hand-written labels
-- the codebook does not know are seven unknown_label rows here, never a silent n=0.
-- Grain: one row per (codebook, reason). Input: the view rejected_annotations.
SELECT
    'support labels (codebook ' || codebook || ')' AS input,
    reason,
    count(*) AS n,
    arg_min(source_file, (source_file, source_line)) AS first_file,
    arg_min(source_line, (source_file, source_line)) AS first_line,
    arg_min(coalesce(detail, field), (source_file, source_line)) AS first_detail
FROM rejected_annotations
GROUP BY ALL
ORDER BY input, n DESC, reason
