-- Purpose: remember the ids of the batch just validated (first occurrences keep them).
-- Grain: one row per distinct (kind, id). Input: batch_ids from select_line_ids.
INSERT INTO seen_ids SELECT DISTINCT kind, id FROM batch_ids
