-- Purpose: the lines of one batch that failed the ordered checks, as `rejected_records` rows:
-- defect type, the stage that caught it, a reason and the raw text (nothing is lost).
-- Grain: one row per rejected line. Input: sr_checked.
SELECT
    c.file,
    c.line,
    c.defect_type,
    c.stage,
    c.reason,
    'answer_id=' || coalesce(c.answer_id, '?') || ' source_url=' || coalesce(c.source_url, '?')
        AS detail,
    c.raw
FROM sr_checked AS c
WHERE c.defect_type IS NOT NULL
