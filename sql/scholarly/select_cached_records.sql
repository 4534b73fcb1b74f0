-- Purpose: the registry cache: per (registry, kind, lookup_key) the record to use, an answered
-- one (found / not_found) before an error, the newest first; ties broken on the body so the
-- choice is deterministic. Input: $glob, every scholarly_records partition file on disk.
-- Grain: one row per (registry, kind, lookup_key).
SELECT registry, kind, lookup_key, doi, fetched_at, http_status, outcome, detail, raw_json
FROM read_parquet($glob, hive_partitioning = false, union_by_name = true)
QUALIFY row_number() OVER (
    PARTITION BY registry, kind, lookup_key
    ORDER BY outcome IN ('found', 'not_found') DESC, fetched_at DESC, md5(coalesce(raw_json, ''))
) = 1
ORDER BY registry, kind, lookup_key
