-- Purpose: hop 0 of the alignment: each citation with a key and a reference time, looked up
-- at its reference time. Grain: one row per alignable citation. Input: cites.
SELECT citation_id, 0 AS hop, canonical_key AS key, hash(canonical_key) AS kh,
    hash('k2:' || canonical_key) AS kh2, reference_time AS at_time, window_start, window_end,
    [canonical_key] AS visited
FROM cites
WHERE canonical_key IS NOT NULL AND reference_time IS NOT NULL
