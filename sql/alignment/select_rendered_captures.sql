-- Purpose: the browser-rendered DOM records (`resource` records whose URI is $prefix followed
-- by the page's URI) usable as a page's text: the first written one per (URI, capture time).
-- Read once per date; select_rendered_payloads joins each batch's final captures with it.
-- Grain: one row per (target_uri, capture_time). Input: caps_raw (the captures read); $prefix.
SELECT target_uri, capture_time, file, "offset", payload_sha256
FROM caps_raw
WHERE record_type = 'resource' AND starts_with(target_uri, $prefix)
    AND error IS NULL AND NOT coalesce(truncated, false) AND payload_sha256 IS NOT NULL
    AND capture_time IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY target_uri, capture_time ORDER BY file, "offset") = 1
