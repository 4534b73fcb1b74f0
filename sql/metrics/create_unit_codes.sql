-- Purpose: an integer code for each metric, engine, domain, risk band, query and answer among
-- the resolved units (y not null and not NaN): the rank of the value's first appearance in
-- unit order (rowid), starting at 0. The intervals read clusters (queries, domains) by these codes,
-- so the order of first appearance is kept exactly; a NULL value gets a code like any other.
-- Grain: one row per (key, value). Input: metric_units.
CREATE OR REPLACE TEMP TABLE unit_codes AS
WITH resolved AS (
    SELECT rowid AS seq, metric, engine, domain, risk_band, query_id, answer_id
    FROM metric_units
    WHERE y IS NOT NULL AND NOT isnan(y)
),
firsts AS (
    SELECT 'metric' AS key, metric AS value, min(seq) AS first FROM resolved GROUP BY metric
    UNION ALL
    SELECT 'engine', engine, min(seq) FROM resolved GROUP BY engine
    UNION ALL
    SELECT 'domain', domain, min(seq) FROM resolved GROUP BY domain
    UNION ALL
    SELECT 'risk_band', risk_band, min(seq) FROM resolved GROUP BY risk_band
    UNION ALL
    SELECT 'query_id', query_id, min(seq) FROM resolved GROUP BY query_id
    UNION ALL
    SELECT 'answer_id', answer_id, min(seq) FROM resolved GROUP BY answer_id
)
SELECT key, value, (row_number() OVER (PARTITION BY key ORDER BY first) - 1)::INTEGER AS code
FROM firsts
