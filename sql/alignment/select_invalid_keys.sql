-- Purpose: the keys that have captures without a valid date (they cannot be aligned; a
-- citation of such a key with no other capture says capture_date_invalid, not "never
-- captured"). Grain: one row per key hash. Input: caps.
SELECT DISTINCT kh FROM caps WHERE capture_time IS NULL
