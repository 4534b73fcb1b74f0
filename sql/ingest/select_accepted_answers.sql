-- Purpose: the answers JSONL lines that passed every check of select_answer_defects.
-- Grain: one row per accepted line. Inputs: answer_json, answer_defects.
SELECT a.file, a.line, a.j
FROM answer_json AS a
ANTI JOIN answer_defects AS d ON a.file = d.file AND a.line = d.line
WHERE a.j IS NOT NULL
