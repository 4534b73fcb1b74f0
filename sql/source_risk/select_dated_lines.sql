-- Purpose: which lines of a batch belong to the observation date being audited: the date of
-- their answer, else the file's fallback date (the date it is named after, or the first answer
-- date), where validation rejects them with their reason. Grain: one row per line, in order.
-- Inputs: sr_line_ids(line, answer_id), sr_answer_dates(answer_id, observation_date), one row
-- per answer id. Parameters: $date, $fallback (NULL when the raw folder has no answer date).
SELECT coalesce(coalesce(d.observation_date, $fallback) = $date, false) AS keep
FROM sr_line_ids AS i
LEFT JOIN sr_answer_dates AS d ON d.answer_id = i.answer_id
ORDER BY i.line
