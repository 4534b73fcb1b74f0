-- Purpose: the registry cache as the project remembers it: per (registry, kind, lookup_key)
-- every distinct answered record (found / not_found) once, or, for a key never answered, its
-- newest error; the store picks the record a partition reads (citeaudit.scholarly.cache).
-- Partitions repeat the records they share: one copy per (key, fetch time), ties broken on
-- the body so the choice is deterministic. Input: $glob, every scholarly_records partition
-- file on disk. Grain: one row per (registry, kind, lookup_key, fetched_at), oldest first.
WITH records AS (
    SELECT
        registry, kind, lookup_key, doi, fetched_at, http_status, outcome, detail, raw_json,
        outcome IN ('found', 'not_found') AS answered
    FROM read_parquet($glob, hive_partitioning = false, union_by_name = true)
),

copies AS (
    SELECT *
    FROM records
    QUALIFY row_number() OVER (
        PARTITION BY registry, kind, lookup_key, fetched_at, answered
        ORDER BY md5(coalesce(raw_json, '')), outcome, coalesce(detail, '')
    ) = 1
)

SELECT registry, kind, lookup_key, doi, fetched_at, http_status, outcome, detail, raw_json
FROM copies
QUALIFY answered OR NOT bool_or(answered) OVER (PARTITION BY registry, kind, lookup_key)
    AND row_number() OVER (
        PARTITION BY registry, kind, lookup_key ORDER BY fetched_at DESC
    ) = 1
ORDER BY registry, kind, lookup_key, fetched_at, answered
