-- Purpose: record one hop of every active citation: the capture it landed on and, for a 3xx,
-- the canonical key of the redirect target. Grain: one row per (citation, hop).
-- A match whose stored key differs from the hop's key (a hash collision in the ASOF join) is
-- treated as no match. Inputs: matches, caps, redirect_keys (target_uri, redirect_location →
-- next_key, location_error).
INSERT INTO hops
SELECT
    m.citation_id, m.hop, m.key, m.visited, c.cap_id,
    c.file, c.offset, c.record_type, c.target_uri, c.capture_time, c.http_status,
    c.redirect_location, c.problem, c.cdx_digest, c.payload_sha256, c.refers_to_uri,
    c.refers_to_date,
    r.next_key, r.location_error
FROM matches AS m
LEFT JOIN caps AS c ON c.cap_id = m.cap_id AND c.ckey = m.key
LEFT JOIN redirect_keys AS r
    ON r.target_uri = c.target_uri AND r.redirect_location = c.redirect_location
    AND c.http_status BETWEEN 300 AND 399
