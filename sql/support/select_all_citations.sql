-- Purpose: every date's (claim_id, citation_id) pairs (what a judgment's citation must be).
-- Grain: one row per (observation_date, citation_id). Input: the citations files ($glob).
SELECT claim_id, citation_id, observation_date
FROM read_parquet($glob, hive_partitioning = true, hive_types = {'observation_date': VARCHAR})
