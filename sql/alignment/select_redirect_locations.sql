-- Purpose: the distinct (target_uri, Location) pairs of the 3xx captures a hop landed on, so
-- Python can resolve each relative Location and key it once. Grain: one row per pair.
-- Inputs: matches (citation_id, kh2, cap_id), caps.
SELECT DISTINCT c.redirect_base AS target_uri, c.redirect_location
FROM matches AS m
JOIN caps AS c ON c.cap_id = m.cap_id AND c.kh2 = m.kh2
WHERE c.redirect_location IS NOT NULL
ORDER BY 1, 2
