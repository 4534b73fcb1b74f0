-- Purpose: for each frontier row (a citation's key at one hop), the capture of that key
-- nearest the hop's time inside the citation's window: ASOF joins on both sides (nearest at
-- or before, nearest at or after), the nearer one wins (before on a tie). Usable records are
-- preferred; only when none is in the window is the nearest unusable one returned, so its
-- problem becomes the reason. Keys are compared by their 64-bit hash here; insert_hop_rows
-- confirms each match with a second hash and drops a collision, never uses it. Grain: one row per frontier
-- row. Inputs: frontier, slots.
WITH usable AS (
    SELECT kh, capture_time, usable_id AS cap_id FROM slots
    WHERE usable_id IS NOT NULL AND kh IN (SELECT kh FROM frontier)
),
u AS (
    SELECT f.citation_id, f.at_time, f.window_start, f.window_end, f.kh,
        b.cap_id AS b_id, b.capture_time AS b_time
    FROM frontier AS f
    ASOF LEFT JOIN usable AS b ON f.kh = b.kh AND f.at_time >= b.capture_time
),
ua AS (
    SELECT u.*, a.cap_id AS a_id, a.capture_time AS a_time
    FROM u
    ASOF LEFT JOIN usable AS a ON u.kh = a.kh AND u.at_time <= a.capture_time
),
u_pick AS (
    SELECT citation_id, at_time, window_start, window_end, kh,
        CASE WHEN b_time >= window_start THEN b_id END AS b_id,
        CASE WHEN b_time >= window_start THEN b_time END AS b_time,
        CASE WHEN a_time <= window_end THEN a_id END AS a_id,
        CASE WHEN a_time <= window_end THEN a_time END AS a_time
    FROM ua
),
unmatched AS (
    SELECT citation_id, at_time, window_start, window_end, kh
    FROM u_pick WHERE b_id IS NULL AND a_id IS NULL
),
anyslot AS (
    SELECT kh, capture_time, any_id AS cap_id FROM slots
    WHERE kh IN (SELECT kh FROM unmatched)
),
x AS (
    SELECT f.*, b.cap_id AS b_id, b.capture_time AS b_time
    FROM unmatched AS f
    ASOF LEFT JOIN anyslot AS b ON f.kh = b.kh AND f.at_time >= b.capture_time
),
xa AS (
    SELECT x.*, a.cap_id AS a_id, a.capture_time AS a_time
    FROM x
    ASOF LEFT JOIN anyslot AS a ON x.kh = a.kh AND x.at_time <= a.capture_time
),
picks AS (
    SELECT citation_id, at_time, b_id, b_time, a_id, a_time FROM u_pick
    WHERE b_id IS NOT NULL OR a_id IS NOT NULL
    UNION ALL
    SELECT citation_id, at_time,
        CASE WHEN b_time >= window_start THEN b_id END,
        CASE WHEN b_time >= window_start THEN b_time END,
        CASE WHEN a_time <= window_end THEN a_id END,
        CASE WHEN a_time <= window_end THEN a_time END
    FROM xa
),
chosen AS (
    SELECT citation_id,
        CASE WHEN a_id IS NULL OR (b_id IS NOT NULL AND at_time - b_time <= a_time - at_time)
            THEN b_id ELSE a_id END AS cap_id
    FROM picks
)
SELECT f.citation_id, f.hop, f.key, f.kh, f.kh2, f.at_time, f.window_start, f.window_end,
    f.visited, ch.cap_id
FROM frontier AS f
LEFT JOIN chosen AS ch USING (citation_id)
