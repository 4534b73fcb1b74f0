-- Purpose: `rejected_records`: every line that failed the contract, with its defect type, the
-- stage that caught it, a reason and the raw text (nothing is lost). Grain: one row per
-- rejected line. Inputs: sr_checked, sr_linked, sr_typed, sr_lines.
SELECT
    file,
    line,
    final_defect AS defect_type,
    final_stage AS stage,
    final_reason AS reason,
    'answer_id=' || coalesce(answer_id, '?') || ' source_url=' || coalesce(source_url, '?')
        AS detail,
    raw
FROM sr_checked
JOIN sr_linked USING (file, line)
JOIN sr_typed USING (file, line)
JOIN sr_lines USING (file, line)
WHERE final_defect IS NOT NULL
ORDER BY file, line
