-- Purpose: for each citation whose final capture is 2xx (the page existed when cited), the
-- newest usable capture of the same key taken after both the reference time and the aligned
-- capture, whenever it was taken (not bound by the alignment window: a current-state fetch
-- weeks later counts). Its change, if any: `gone_since_citation` when it answered 404/410,
-- `content_changed_since_citation` when it is a 2xx with another content digest; NULL when
-- the page is unchanged or its later state says nothing about the content (3xx, 5xx).
-- Grain: one row per citation with a later capture. Inputs: hops (last hop), cites, caps.
WITH last_hop AS (
    SELECT h.* FROM hops AS h
    JOIN (SELECT citation_id, max(hop) AS hop FROM hops GROUP BY citation_id)
        USING (citation_id, hop)
),
newest AS (
    SELECT
        l.citation_id,
        max(c.capture_time) AS later_capture_time,
        arg_max(c.http_status, c.capture_time) AS later_status,
        arg_max(c.dh, c.capture_time) AS later_dh,
        any_value(l.dh) AS aligned_dh
    FROM last_hop AS l
    JOIN cites AS ci USING (citation_id)
    JOIN caps AS c ON c.kh = l.kh AND c.kh2 = l.kh2
        AND c.capture_time > l.capture_time AND c.capture_time > ci.reference_time
    WHERE c.problem IS NULL AND l.http_status BETWEEN 200 AND 299
    GROUP BY l.citation_id
)
SELECT
    citation_id,
    later_capture_time,
    later_status::INTEGER AS later_status,
    CASE
        WHEN later_status IN (404, 410) THEN 'gone_since_citation'
        WHEN later_status BETWEEN 200 AND 299 AND later_dh IS DISTINCT FROM aligned_dh
            THEN 'content_changed_since_citation'
    END AS later_change
FROM newest
