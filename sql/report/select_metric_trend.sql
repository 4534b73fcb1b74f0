-- Purpose: the trend over observation dates for the report: the overall and per-engine rows of
-- one codebook's metrics, for every date up to the report's date.
-- Grain: one row per (observation_date, metric, margin, engine). Input: the metrics dataset
-- files ($glob, hive folders observation_date=…/codebook=…).
SELECT
    strftime(observation_date, '%Y-%m-%d') AS observation_date,
    metric,
    margin,
    engine,
    estimate,
    ci_low,
    ci_high,
    numerator,
    denominator,
    unresolved,
    verdict,
    reason
FROM read_parquet(
    $glob,
    hive_partitioning = true,
    hive_types = {'observation_date': DATE, 'codebook': VARCHAR},
    union_by_name = true
)
WHERE codebook = $codebook
    AND observation_date <= $date::DATE
    AND margin IN ('overall', 'engine')
ORDER BY observation_date, metric, margin, engine
