-- Purpose: why answers failed: the fail-closed verification rule's reasons for rejected
-- answers and ingestion reasons for rejected lines, side by side, for the run summary.
-- Grain: one row per (stage, reason). Inputs: the catalog views answer_checks, rejected_inputs.
SELECT 'citation check' AS stage, reason, count(*) AS n
FROM answer_checks WHERE verdict = 'rejected' GROUP BY reason
UNION ALL
SELECT 'ingestion', reason, count(*) FROM rejected_inputs GROUP BY reason
ORDER BY stage, n DESC, reason
