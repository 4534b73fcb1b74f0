-- Purpose: archive records that could not be used (captures with an error or truncated),
-- counted by error code with the first example (lowest file, offset).
-- Grain: one row per error code. Input: the view captures.
SELECT
    'WARC/ARC records' AS input,
    coalesce(error, 'truncated_record') AS reason,
    count(*) AS n,
    arg_min(file, (file, "offset")) AS first_file,
    NULL::BIGINT AS first_line,
    arg_min('offset ' || "offset" || coalesce(' ' || target_uri, ''), (file, "offset"))
        AS first_detail
FROM captures
WHERE error IS NOT NULL OR truncated
GROUP BY ALL
ORDER BY n DESC, reason
