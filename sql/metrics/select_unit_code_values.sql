-- Purpose: the codes of the stratum keys (metric, engine, domain, risk band), to find the
-- resolved units of a counts row, and the code of a NULL query or answer if there is one (a
-- NULL is a cluster label for the intervals but is not counted as a query or an answer); the
-- other query and answer codes stay in DuckDB (one per query or answer, not needed by name).
-- Grain: one row per (key, value). Input: unit_codes.
SELECT key, value, code
FROM unit_codes
WHERE key NOT IN ('query_id', 'answer_id') OR value IS NULL
ORDER BY key, code
