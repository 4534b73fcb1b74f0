-- Purpose: an empty originals table (no revisit to resolve, or no capture files), with the
-- columns select_citation_captures reads. Grain: none. Input: caps (for the column types).
SELECT ckey, target_uri, file, "offset", capture_time, http_status, cdx_digest,
    payload_sha256, problem
FROM caps
WHERE false
