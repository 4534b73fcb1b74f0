-- Purpose: one capture per (key, instant) for the ASOF joins: `usable_id` is the last written
-- usable record at that instant (a retry within the same second wins over the failure),
-- `any_id` the last written usable one or, when none, the last written broken one (used only
-- to name the reason when no usable record is in the window). Records without a valid date
-- cannot be aligned and are left out. Grain: one row per (kh, capture_time). Input: caps.
SELECT
    kh, capture_time,
    max(cap_id) FILTER (WHERE problem IS NULL) AS usable_id,
    arg_max(cap_id, (problem IS NULL)::INTEGER::HUGEINT * (1::HUGEINT << 80) + cap_id) AS any_id
FROM caps
WHERE capture_time IS NOT NULL
GROUP BY kh, capture_time
