-- Purpose: files and folders under the raw folder the pipeline does not read (ignored_inputs),
-- counted by reason with the first example path.
-- Grain: one row per reason. Input: the view ignored_inputs.
SELECT
    'raw folder (files not read)' AS input,
    reason,
    count(*) AS n,
    min(path) AS first_file,
    NULL::BIGINT AS first_line,
    arg_min(detail, path) AS first_detail
FROM ignored_inputs
GROUP BY ALL
ORDER BY n DESC, reason
