-- Purpose: the table every metric's units are appended to (metric after metric, in the order
-- of the definitions; its rowid is the unit order the intervals read), so the units stay in
-- DuckDB: counted there (count_metric_strata.sql), coded there (create_unit_codes.sql), and
-- spilled to disk beyond the connection's memory limit instead of held in Python.
-- Grain: one row per unit of one metric (a citation, a pair, a claim, a tuple, an answer).
CREATE OR REPLACE TEMP TABLE metric_units (
    metric VARCHAR,
    answer_id VARCHAR,
    query_id VARCHAR,
    engine VARCHAR,
    domain VARCHAR,
    risk_band VARCHAR,
    inclusion_prob DOUBLE,
    y DOUBLE,
    category VARCHAR
)
