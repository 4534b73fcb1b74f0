-- Purpose: the lines of one batch that failed the ordered checks, as `rejected_records` rows:
-- defect type, the stage that caught it, a reason and the raw text (nothing is lost).
-- Grain: one row per rejected line. Inputs: sr_checked, sr_typed, sr_lines.
SELECT
    file,
    line,
    defect_type,
    stage,
    reason,
    'answer_id=' || coalesce(answer_id, '?') || ' source_url=' || coalesce(source_url, '?')
        AS detail,
    sr_lines.raw
FROM sr_checked
JOIN sr_typed USING (file, line)
JOIN sr_lines USING (file, line)
WHERE defect_type IS NOT NULL
