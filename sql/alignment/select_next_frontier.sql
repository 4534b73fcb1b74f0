-- Purpose: the next hop: citations whose last capture is a 3xx to a key not yet visited,
-- looked up at the redirect's own capture time, within the citation's window.
-- Grain: one row per citation still following a redirect. Inputs: hops, cites.
SELECT h.citation_id, h.hop + 1 AS hop, h.next_key AS key, hash(h.next_key) AS kh,
    hash('k2:' || h.next_key) AS kh2, h.capture_time AS at_time, c.window_start, c.window_end,
    list_append(h.visited, h.next_key) AS visited
FROM hops AS h
JOIN cites AS c USING (citation_id)
WHERE h.hop = $hop AND h.problem IS NULL AND h.next_key IS NOT NULL
    AND NOT list_contains(h.visited, h.next_key) AND h.hop < $max_hops
