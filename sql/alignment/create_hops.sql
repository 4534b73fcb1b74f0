-- Purpose: the empty table of redirect hops the alignment fills hop by hop.
-- Grain: one row per (citation, hop).
CREATE OR REPLACE TABLE hops (
    citation_id VARCHAR, hop INTEGER, key VARCHAR, kh UBIGINT, kh2 UBIGINT,
    visited VARCHAR[], cap_id BIGINT, capture_time TIMESTAMPTZ, http_status INTEGER,
    is_revisit BOOLEAN, dh UBIGINT, redirect_location VARCHAR, problem VARCHAR,
    next_key VARCHAR, location_error VARCHAR
)
