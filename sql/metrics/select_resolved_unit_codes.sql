-- Purpose: the resolved units (y not null and not NaN) as numbers only: their place in unit
-- order (seq, the rowid), the codes of their metric, engine, domain, risk band, query and
-- answer (create_unit_codes.sql), the answer's inclusion probability and y. This is all the
-- intervals read; no id or label leaves DuckDB per unit. Unordered, so it streams out in
-- record batches without a sort held in DuckDB; the reader puts the units in seq order.
-- Grain: one row per resolved unit. Inputs: metric_units, unit_codes.
SELECT
    u.rowid AS seq,
    m.code AS metric,
    e.code AS engine,
    d.code AS domain,
    b.code AS risk_band,
    q.code AS query,
    a.code AS answer,
    u.inclusion_prob,
    u.y
FROM metric_units AS u
JOIN unit_codes AS m ON m.key = 'metric' AND m.value IS NOT DISTINCT FROM u.metric
JOIN unit_codes AS e ON e.key = 'engine' AND e.value IS NOT DISTINCT FROM u.engine
JOIN unit_codes AS d ON d.key = 'domain' AND d.value IS NOT DISTINCT FROM u.domain
JOIN unit_codes AS b ON b.key = 'risk_band' AND b.value IS NOT DISTINCT FROM u.risk_band
JOIN unit_codes AS q ON q.key = 'query_id' AND q.value IS NOT DISTINCT FROM u.query_id
JOIN unit_codes AS a ON a.key = 'answer_id' AND a.value IS NOT DISTINCT FROM u.answer_id
WHERE u.y IS NOT NULL AND NOT isnan(u.y)
