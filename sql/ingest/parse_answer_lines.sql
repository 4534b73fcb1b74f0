-- Purpose: parse every non-blank answers JSONL line once, so later statements never re-parse text.
-- Grain: one row per input line (file, line). Input: answer_lines(file, line, text, utf8_ok),
-- registered from Arrow by citeaudit.ingest.answers. `j` is the parsed object, NULL unless the line is a
-- JSON object; `top_type` says what it was instead (NULL for text that is not JSON at all).
SELECT
    file,
    line,
    utf8_ok,
    CASE WHEN utf8_ok AND json_valid(text) THEN try(json_type(text)) END AS top_type,
    CASE
        WHEN utf8_ok AND json_valid(text) AND try(json_type(text)) = 'OBJECT' THEN try(text::JSON)
    END AS j
FROM answer_lines
