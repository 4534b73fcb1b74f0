-- Purpose: the `rejected_inputs` rows of an answers batch: each defect with the raw line kept,
-- so a rejected answer is never lost, only set aside with its reason.
-- Grain: one row per (file, line, field, reason). Inputs: answer_defects, answer_lines.
SELECT
    'answers' AS source,
    d.file AS source_file,
    d.line AS source_line,
    d.field,
    d.reason,
    d.detail,
    l.text AS raw
FROM answer_defects AS d
JOIN answer_lines AS l ON l.file = d.file AND l.line = d.line
ORDER BY d.file, d.line, d.field NULLS FIRST, d.reason
