-- Purpose: the captures a browser may still have to render (fetch.browser turned on after a
-- page was captured statically): the newest readable capture of each URL key in the crawl's
-- own fetched WARCs of the date, with whether a rendered DOM of exactly that capture (a
-- `resource` record `$prefix || target_uri` with its WARC-Date) is already there. The crawl
-- follows a skipped page's redirect hops through these rows to its final capture and renders
-- it when that capture is an unrendered 2xx response (citeaudit/archive/capture/crawl.py).
-- Grain: one row per urlkey. Inputs: known (capture index rows of the supplied and fetched
-- WARCs around the date); $fetched_re (the crawl's own file names), $prefix
-- ('urn:rendered-dom:').
WITH own AS (
    SELECT *
    FROM known
    WHERE regexp_matches(file, $fetched_re)
        AND error IS NULL
        AND capture_time IS NOT NULL
        AND NOT coalesce(truncated, false)
),
rendered AS (
    SELECT DISTINCT target_uri, capture_time
    FROM own
    WHERE record_type = 'resource' AND starts_with(target_uri, $prefix)
),
newest AS (
    SELECT urlkey, target_uri, capture_time, record_type, http_status, redirect_location,
        file, "offset", record_id, warc_date_raw
    FROM own
    WHERE record_type IN ('response', 'revisit') AND urlkey IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY urlkey
                               ORDER BY capture_time DESC, file DESC, "offset" DESC) = 1
)
SELECT
    n.*,
    r.target_uri IS NOT NULL AS rendered
FROM newest AS n
LEFT JOIN rendered AS r
    ON r.target_uri = $prefix || n.target_uri AND r.capture_time = n.capture_time
ORDER BY n.urlkey
