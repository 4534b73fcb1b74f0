-- Purpose: the robots.txt answers the project remembers across crawls: per requested URL (a
-- robots.txt URL or a hop its redirect led to) the newest answer kept in RAW/robots/, the one a
-- crawl may reuse while it is younger than fetch.robots_max_age_hours. Ties on the fetch time
-- are broken on the status and the body, so the choice is deterministic.
-- Inputs: $glob, every RAW/robots/*.parquet file (one per crawl that fetched robots.txt).
-- Grain: one row per url.
SELECT url, fetched_at, http_status, location, body
FROM read_parquet($glob, union_by_name = true)
QUALIFY row_number() OVER (
    PARTITION BY url ORDER BY fetched_at DESC, http_status, location, body
) = 1
ORDER BY url
