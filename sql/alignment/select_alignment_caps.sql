-- Purpose: the narrow capture table the alignment joins over (HTTP responses and revisits):
-- `cap_id` (write order), the canonical key as two independent 64-bit hashes (`kh` is the
-- ASOF join key — integer sorts are far cheaper than string sorts — and `kh2` confirms every
-- match, so two keys are confused only if both hashes collide), the content digest as a hash
-- (`dh`), and the reason a record is unusable (NULL when usable). Wide columns (URIs,
-- digests) stay in parquet and are fetched only for the records a citation lands on
-- (select_capture_details). A revisit's own WARC-Truncated says nothing about the payload,
-- which its original carries.
-- Grain: one row per capture record. Inputs: caps_raw (CAPTURE_SCHEMA rows of the crawl
-- dates read), capkeys (target_uri → canonical_key for URIs with tracking parameters),
-- files (select_capture_files).
WITH keyed AS (
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
    hash('k2:' || r.ckey) AS kh2,
    r.capture_time,
    r.http_status,
    r.record_type = 'revisit' AS is_revisit,
    hash(r.cdx_digest) AS dh,
    CASE WHEN r.http_status BETWEEN 300 AND 399 THEN r.target_uri END AS redirect_base,
    CASE WHEN r.http_status BETWEEN 300 AND 399 THEN r.redirect_location END
        AS redirect_location,
    CASE
        WHEN r.capture_time IS NULL THEN 'capture_date_invalid'
        WHEN r.truncated AND r.record_type = 'response' THEN 'truncated_record'
        WHEN r.digest_verified = false THEN 'digest_mismatch'
        WHEN r.error IS NOT NULL THEN 'unreadable_record'
        WHEN r.http_status IS NULL AND r.record_type = 'response' THEN 'missing_http_status'
    END AS problem
FROM keyed AS r
JOIN files AS f USING (file)
