-- Purpose: the `rejected_annotations` table of one observation date, in the columns of
-- `rejected_inputs`: every annotation row (or file) that cannot be used, with its reason.
-- Grain: one row per rejected annotation row or file-level defect. Input: classified.
SELECT $source AS source, file AS source_file, line AS source_line, field, reason, detail, raw
FROM classified
WHERE reason IS NOT NULL AND observation_date = $date
ORDER BY file, line
