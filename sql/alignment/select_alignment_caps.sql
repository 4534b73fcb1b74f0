-- Purpose: the capture rows alignment can use: HTTP responses and revisits, keyed by the
-- canonical key (and its 64-bit hash `kh`, the ASOF join key: integer sorts are far cheaper
-- than string sorts; every match is checked against the key itself afterwards), with the
-- reason a record is unusable (NULL when usable). `cap_id` orders records as written
-- (file rank in the high bits, byte offset in the low 40), so "last written" is max(cap_id).
-- Grain: one row per capture record. Inputs: caps_raw (CAPTURE_SCHEMA rows of the crawl
-- dates read; a revisit's own WARC-Truncated says nothing about the payload, which its
-- original carries), capkeys (target_uri → canonical_key for URIs with tracking parameters).
WITH files AS (
    SELECT file, row_number() OVER (ORDER BY file) AS file_rank
    FROM (SELECT DISTINCT file FROM caps_raw)
),
keyed AS (
    SELECT r.*, coalesce(k.canonical_key, r.urlkey) AS ckey
    FROM caps_raw AS r
    LEFT JOIN capkeys AS k ON k.target_uri = r.target_uri
    WHERE r.record_type IN ('response', 'revisit')
        AND r.urlkey IS NOT NULL
        AND (r.target_uri ILIKE 'http://%' OR r.target_uri ILIKE 'https://%')
)
SELECT
    (f.file_rank << 40) + r.offset AS cap_id,
    hash(r.ckey) AS kh,
    r.ckey, r.file, r.offset, r.record_type, r.target_uri, r.capture_time, r.http_status,
    r.redirect_location, r.cdx_digest, r.payload_sha256, r.refers_to_uri, r.refers_to_date,
    CASE
        WHEN r.capture_time IS NULL THEN 'capture_date_invalid'
        WHEN r.truncated AND r.record_type = 'response' THEN 'truncated_record'
        WHEN r.digest_verified = false THEN 'digest_mismatch'
        WHEN r.error IS NOT NULL THEN 'unreadable_record'
        WHEN r.http_status IS NULL AND r.record_type = 'response' THEN 'missing_http_status'
    END AS problem
FROM keyed AS r
JOIN files AS f USING (file)
