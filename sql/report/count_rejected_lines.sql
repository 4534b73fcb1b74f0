-- Purpose: rejected answer and import lines (rejected_inputs) counted by input and reason,
-- each with its first example (lowest source_file, source_line), so no rejected input
-- vanishes from the summary or the report.
-- Grain: one row per (input, reason). Input: the view rejected_inputs (one date or all dates).
SELECT
    source AS input,
    reason,
    count(*) AS n,
    arg_min(source_file, (source_file, source_line)) AS first_file,
    arg_min(source_line, (source_file, source_line)) AS first_line,
    arg_min(coalesce(field, detail), (source_file, source_line)) AS first_detail
FROM rejected_inputs
GROUP BY ALL
ORDER BY input, n DESC, reason
