-- Purpose: the empty table of redirect hops the alignment fills hop by hop.
-- Grain: one row per (citation, hop).
CREATE OR REPLACE TABLE hops (
    citation_id VARCHAR, hop INTEGER, key VARCHAR, visited VARCHAR[], cap_id BIGINT,
    file VARCHAR, "offset" BIGINT, record_type VARCHAR, target_uri VARCHAR,
    capture_time TIMESTAMPTZ, http_status INTEGER, redirect_location VARCHAR, problem VARCHAR,
    cdx_digest VARCHAR, payload_sha256 VARCHAR, refers_to_uri VARCHAR, refers_to_date VARCHAR,
    next_key VARCHAR, location_error VARCHAR
)
