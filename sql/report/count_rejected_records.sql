-- Purpose: rejected source-risk lines (rejected_records) counted by codebook and defect type,
-- each with its first example (lowest source_file, source_line).
-- Grain: one row per (codebook, reason). Input: the view rejected_records.
SELECT
    'source-risk records (codebook ' || codebook || ')' AS input,
    reason,
    count(*) AS n,
    arg_min(source_file, (source_file, source_line)) AS first_file,
    arg_min(source_line, (source_file, source_line)) AS first_line,
    arg_min(detail, (source_file, source_line)) AS first_detail
FROM rejected_records
GROUP BY ALL
ORDER BY input, n DESC, reason
