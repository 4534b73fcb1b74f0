-- Purpose: one capture per (key, instant) for the ASOF joins, in two sets:
-- usable records only (kind 'usable') and every dated record (kind 'any', used to name the
-- reason when no usable record is in the window). Several records at one instant resolve
-- to the last written usable one (a retry within the same second wins over the failure).
-- Grain: one row per (kind, ckey, capture_time). Input: caps.
CREATE OR REPLACE TABLE slots AS
SELECT 'usable' AS kind, ckey, capture_time, cap_id
FROM caps
WHERE problem IS NULL
QUALIFY row_number() OVER (
    PARTITION BY ckey, capture_time ORDER BY file DESC, "offset" DESC) = 1
UNION ALL
SELECT 'any' AS kind, ckey, capture_time, cap_id
FROM caps
WHERE capture_time IS NOT NULL
QUALIFY row_number() OVER (
    PARTITION BY ckey, capture_time
    ORDER BY (problem IS NULL) DESC, file DESC, "offset" DESC) = 1
ORDER BY kind, ckey, capture_time
