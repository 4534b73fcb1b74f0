-- Purpose: for each citation whose final capture is 2xx, the first later usable 2xx capture
-- of the same key inside the citation's window whose content digest differs: the page moved
-- on (L1 `changed`). Grain: one row per such citation. Inputs: hops (last hop), cites, caps.
WITH last_hop AS (
    SELECT h.* FROM hops AS h
    JOIN (SELECT citation_id, max(hop) AS hop FROM hops GROUP BY citation_id)
        USING (citation_id, hop)
)
SELECT l.citation_id, min(c.capture_time) AS later_capture_time
FROM last_hop AS l
JOIN cites AS ci USING (citation_id)
JOIN caps AS c ON c.kh = l.kh AND c.kh2 = l.kh2 AND c.capture_time > l.capture_time
WHERE c.capture_time <= ci.window_end AND c.problem IS NULL
    AND c.http_status BETWEEN 200 AND 299 AND l.http_status BETWEEN 200 AND 299
    AND c.dh IS DISTINCT FROM l.dh
GROUP BY l.citation_id
