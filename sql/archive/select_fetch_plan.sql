-- Purpose: what to fetch for one observation date. A cited page is fetched when its newest
-- readable capture is missing or older than $current_after_s seconds before $now: as its state
-- near the reference time (`reference`) when no readable capture lies within
-- $window_s seconds of that time, else as its current state (`current`). Otherwise it is
-- skipped (`skip`: a recent readable capture exists, or a recent capture of ours cut at the
-- size limit), which makes a rerun fetch nothing new.
-- The newest readable 2xx response with a digest is returned so an identical payload can be
-- written as a revisit of it.
-- Grain: one row per distinct canonical URL cited that day. Inputs: cited (url,
-- canonical_url, canonical_key, url_error, reference_time), known (capture index rows of the
-- supplied and fetched WARCs around the date).
WITH readable AS (
    SELECT urlkey, target_uri, capture_time, record_type, http_status, cdx_digest
    FROM known
    WHERE record_type IN ('response', 'revisit')
        AND error IS NULL
        AND capture_time IS NOT NULL
        AND coalesce(truncated, false) = false
        AND (http_status IS NOT NULL OR record_type = 'revisit')
),
pages AS (
    SELECT
        canonical_url,
        canonical_key,
        min(url) AS cited_url,
        min(reference_time) AS reference_time,
        max(reference_time) AS last_reference_time,
        count(*) AS citations
    FROM cited
    WHERE url_error IS NULL AND canonical_url IS NOT NULL
    GROUP BY canonical_url, canonical_key
),
near AS (
    SELECT p.canonical_url, count(r.urlkey) AS near_captures
    FROM pages AS p
    LEFT JOIN readable AS r
        ON r.urlkey = p.canonical_key
        AND r.capture_time BETWEEN p.reference_time - to_microseconds(CAST($window_s * 1e6 AS BIGINT))
            AND p.last_reference_time + to_microseconds(CAST($window_s * 1e6 AS BIGINT))
    GROUP BY p.canonical_url
),
newest AS (
    -- our own truncated captures (a page over fetch.max_body_bytes) count as recent too, so
    -- a rerun does not fetch an oversize page again
    SELECT urlkey, max(capture_time) AS newest_capture_time
    FROM (
        SELECT urlkey, capture_time FROM readable
        UNION ALL
        SELECT urlkey, capture_time FROM known
        WHERE record_type = 'response' AND truncated AND error IS NULL
            AND capture_time IS NOT NULL AND regexp_matches(file, $fetched_re)
    )
    GROUP BY urlkey
),
last_ok AS (
    SELECT urlkey, arg_max(cdx_digest, capture_time) AS last_digest,
        arg_max(target_uri, capture_time) AS last_uri,
        max(capture_time) AS last_time
    FROM readable
    WHERE record_type = 'response' AND http_status BETWEEN 200 AND 299 AND cdx_digest IS NOT NULL
    GROUP BY urlkey
)
SELECT
    p.canonical_url,
    p.canonical_key,
    p.cited_url,
    p.reference_time,
    p.citations,
    n.near_captures > 0 AS has_reference_capture,
    w.newest_capture_time,
    CASE
        WHEN w.newest_capture_time IS NOT NULL
            AND w.newest_capture_time
                >= $now::TIMESTAMPTZ - to_microseconds(CAST($current_after_s * 1e6 AS BIGINT))
            THEN 'skip'
        WHEN n.near_captures = 0 THEN 'reference'
        ELSE 'current'
    END AS purpose,
    l.last_digest,
    l.last_uri,
    l.last_time
FROM pages AS p
JOIN near AS n USING (canonical_url)
LEFT JOIN newest AS w ON w.urlkey = p.canonical_key
LEFT JOIN last_ok AS l ON l.urlkey = p.canonical_key
ORDER BY p.canonical_url
