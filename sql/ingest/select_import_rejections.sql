-- Purpose: the `rejected_inputs` rows an engine import wrote (responses it could not turn into
-- answers: truncated JSON, unknown shape, offsets outside the text, markers without a source),
-- so they reach the user beside the rejected answers lines.
-- Grain: one row per (file, line, field, reason). Inputs: $paths, the date's
-- import_rejections/<date>/*.jsonl files (written by citeaudit.imports.engines).
SELECT source, file AS source_file, line AS source_line, field, reason, detail, raw
FROM read_json(
    $paths,
    format = 'newline_delimited',
    columns = {
        source: 'VARCHAR', file: 'VARCHAR', line: 'BIGINT', field: 'VARCHAR',
        reason: 'VARCHAR', detail: 'VARCHAR', raw: 'VARCHAR'
    }
)
ORDER BY file, line, field, reason
