-- Purpose: the capture rows alignment can use: HTTP responses and revisits, keyed by the
-- canonical key, with the reason a record is unusable (NULL when usable).
-- Grain: one row per capture record (cap_id). Inputs: caps_raw (CAPTURE_SCHEMA rows of the
-- crawl dates read; a revisit's own WARC-Truncated says nothing about the payload, which its
-- original carries), capkeys (target_uri → canonical_key for URIs with tracking parameters).
CREATE OR REPLACE TABLE caps AS
SELECT
    row_number() OVER () AS cap_id,  -- a join handle only; ties break on file, offset
    coalesce(k.canonical_key, r.urlkey) AS ckey,
    r.file, r.offset, r.record_type, r.target_uri, r.capture_time, r.http_status,
    r.redirect_location, r.declared_payload_digest, r.cdx_digest, r.payload_sha256,
    r.refers_to_uri, r.refers_to_date, r.record_id, r.truncated, r.digest_verified, r.error,
    r.warc_date_raw,
    CASE
        WHEN r.capture_time IS NULL THEN 'capture_date_invalid'
        WHEN r.truncated AND r.record_type = 'response' THEN 'truncated_record'
        WHEN r.digest_verified = false THEN 'digest_mismatch'
        WHEN r.error IS NOT NULL THEN 'unreadable_record'
        WHEN r.http_status IS NULL AND r.record_type = 'response' THEN 'missing_http_status'
    END AS problem
FROM caps_raw AS r
LEFT JOIN capkeys AS k ON k.target_uri = r.target_uri
WHERE r.record_type IN ('response', 'revisit')
    AND r.urlkey IS NOT NULL
    AND (r.target_uri ILIKE 'http://%' OR r.target_uri ILIKE 'https://%')
