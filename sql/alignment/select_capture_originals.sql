-- Purpose: candidate originals for revisit records: intact or broken response records whose
-- payload digest or key a revisit refers to, from every crawl date up to the window's end
-- (an original may be older than the window). Grain: one row per response record.
-- Inputs: read_parquet($files), wanted (digest VARCHAR, uri VARCHAR: WARC-Refers-To-Target-URI).
SELECT
    r.urlkey AS ckey, r.target_uri, r.file, r.offset, r.capture_time, r.http_status, r.cdx_digest,
    r.payload_sha256,
    CASE
        WHEN r.truncated THEN 'truncated_record'
        WHEN r.digest_verified = false THEN 'digest_mismatch'
        WHEN r.error IS NOT NULL THEN 'unreadable_record'
    END AS problem
FROM read_parquet($files) AS r
WHERE r.record_type = 'response'
    AND (r.cdx_digest IN (SELECT digest FROM wanted)
        OR r.target_uri IN (SELECT uri FROM wanted))
ORDER BY r.file, r.offset
