-- Purpose: an empty originals table (no revisit to resolve, or no capture files), with the
-- columns select_citation_captures reads. Grain: none. Input: none.
SELECT NULL::VARCHAR AS ckey, NULL::VARCHAR AS target_uri, NULL::VARCHAR AS file,
    NULL::BIGINT AS "offset", NULL::TIMESTAMPTZ AS capture_time, NULL::INTEGER AS http_status,
    NULL::VARCHAR AS cdx_digest, NULL::VARCHAR AS payload_sha256, NULL::VARCHAR AS problem
WHERE false
