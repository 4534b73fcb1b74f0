-- Purpose: for each frontier row (a citation's key at one hop), the capture of that key
-- nearest the hop's time inside the citation's window: ASOF joins on both sides (nearest at
-- or before, nearest at or after), the nearer one wins (before on a tie). Usable records are
-- preferred; only when none is in the window is the nearest unusable one returned, so its
-- problem becomes the reason. Grain: one row per frontier row. Inputs: frontier, slots.
WITH usable AS (
    SELECT * FROM slots WHERE kind = 'usable'
),
anyslot AS (
    SELECT * FROM slots WHERE kind = 'any'
),
u AS (
    SELECT f.citation_id, b.cap_id AS b_id, b.capture_time AS b_time,
        a.cap_id AS a_id, a.capture_time AS a_time
    FROM frontier AS f
    ASOF LEFT JOIN usable AS b ON f.key = b.ckey AND f.at_time >= b.capture_time
    ASOF LEFT JOIN usable AS a ON f.key = a.ckey AND f.at_time <= a.capture_time
),
u_pick AS (
    SELECT f.citation_id, f.hop, f.key, f.at_time, f.window_start, f.window_end, f.visited,
        CASE WHEN u.b_time >= f.window_start THEN u.b_id END AS b_id,
        CASE WHEN u.b_time >= f.window_start THEN u.b_time END AS b_time,
        CASE WHEN u.a_time <= f.window_end THEN u.a_id END AS a_id,
        CASE WHEN u.a_time <= f.window_end THEN u.a_time END AS a_time
    FROM frontier AS f
    JOIN u USING (citation_id)
),
unmatched AS (
    SELECT * FROM u_pick WHERE b_id IS NULL AND a_id IS NULL
),
x AS (
    SELECT f.citation_id, b.cap_id AS b_id, b.capture_time AS b_time,
        a.cap_id AS a_id, a.capture_time AS a_time
    FROM unmatched AS f
    ASOF LEFT JOIN anyslot AS b ON f.key = b.ckey AND f.at_time >= b.capture_time
    ASOF LEFT JOIN anyslot AS a ON f.key = a.ckey AND f.at_time <= a.capture_time
),
x_pick AS (
    SELECT f.citation_id,
        CASE WHEN x.b_time >= f.window_start THEN x.b_id END AS b_id,
        CASE WHEN x.b_time >= f.window_start THEN x.b_time END AS b_time,
        CASE WHEN x.a_time <= f.window_end THEN x.a_id END AS a_id,
        CASE WHEN x.a_time <= f.window_end THEN x.a_time END AS a_time
    FROM unmatched AS f
    JOIN x USING (citation_id)
)
SELECT
    p.citation_id, p.hop, p.key, p.at_time, p.window_start, p.window_end, p.visited,
    CASE
        WHEN p.b_id IS NOT NULL OR p.a_id IS NOT NULL THEN
            CASE WHEN p.a_id IS NULL OR (p.b_id IS NOT NULL
                AND p.at_time - p.b_time <= p.a_time - p.at_time) THEN p.b_id ELSE p.a_id END
        ELSE
            CASE WHEN q.a_id IS NULL OR (q.b_id IS NOT NULL
                AND p.at_time - q.b_time <= q.a_time - p.at_time) THEN q.b_id ELSE q.a_id END
    END AS cap_id
FROM u_pick AS p
LEFT JOIN x_pick AS q USING (citation_id)
