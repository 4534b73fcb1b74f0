-- Purpose: the WARC files of the captures read, ranked by name: a record's `cap_id` is its
-- file rank in the high bits and its byte offset in the low 40, so it orders records as
-- written. Grain: one row per file. Input: caps_raw.
SELECT file, row_number() OVER (ORDER BY file) AS file_rank
FROM (SELECT DISTINCT file FROM caps_raw)
ORDER BY file
