-- Purpose: the distinct (target_uri, Location) pairs of the 3xx captures a hop landed on, so
-- Python can resolve each relative Location and key it once. Grain: one row per pair.
-- Inputs: matches (citation_id, cap_id), caps.
SELECT DISTINCT c.target_uri, c.redirect_location
FROM matches AS m
JOIN caps AS c ON c.cap_id = m.cap_id AND c.ckey = m.key
WHERE c.http_status BETWEEN 300 AND 399 AND c.redirect_location IS NOT NULL
ORDER BY 1, 2
