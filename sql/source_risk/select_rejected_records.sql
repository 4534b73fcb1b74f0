-- Purpose: `rejected_records`: every line that failed the contract, with its defect type as
-- the reason (an enumerable code), the stage that caught it, the detail in words, the record's
-- keys as the line states them and the raw text (nothing is lost): the ordered checks'
-- rejections of every batch and lineage's. Grain: one row per rejected line.
-- Inputs: sr_rejects and sr_spool (one batch's files; sr_spool's rows beside their lineage
-- outcome, select_batch_lineage).
SELECT file AS source_file, line AS source_line, defect_type AS reason, stage,
    reason AS detail, detail AS record_keys, raw
FROM sr_rejects
UNION ALL
SELECT
    s.file,
    s.line,
    s.final_defect,
    s.final_stage,
    s.final_reason,
    'answer_id=' || coalesce(s.answer_id, '?') || ' source_url=' || coalesce(s.source_url, '?'),
    s.raw
FROM sr_spool AS s
WHERE s.final_defect IS NOT NULL
ORDER BY source_file, source_line
