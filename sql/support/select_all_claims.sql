-- Purpose: every date's claims (the ids a support judgment may refer to, and their date).
-- Grain: one row per (observation_date, claim_id). Input: the claims parquet files ($glob).
SELECT claim_id, answer_id, observation_date
FROM read_parquet($glob, hive_partitioning = true, hive_types = {'observation_date': VARCHAR})
