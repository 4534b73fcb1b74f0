-- Purpose: record one hop of every active citation: the capture it landed on and, for a 3xx,
-- the canonical key of the redirect target. Grain: one row per (citation, hop).
-- A match whose second key hash differs (a collision of the ASOF hash) counts as no match.
-- Inputs: matches, caps, redirect_keys (target_uri, redirect_location → next_key,
-- location_error).
INSERT INTO hops
SELECT
    m.citation_id, m.hop, m.key, m.kh, m.kh2, m.visited, c.cap_id, c.capture_time,
    c.http_status, c.is_revisit, c.dh, c.redirect_location, c.problem,
    r.next_key, r.location_error
FROM matches AS m
LEFT JOIN caps AS c ON c.cap_id = m.cap_id AND c.kh2 = m.kh2
LEFT JOIN redirect_keys AS r
    ON r.target_uri = c.redirect_base AND r.redirect_location = c.redirect_location
