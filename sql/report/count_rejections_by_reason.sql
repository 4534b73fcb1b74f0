-- Purpose: why answers were not verified: the fail-closed verification rule's reasons for
-- rejected answers, and for unresolved ones (an uncited sentence of unknown worthiness), for
-- the run summary. Rejected input lines are counted with their examples by
-- count_rejected_lines.sql and its siblings.
-- Grain: one row per (verdict, reason). Input: the catalog view answer_checks.
SELECT verdict AS stage, reason, count(*) AS n
FROM answer_checks
WHERE verdict IN ('rejected', 'unresolved')
GROUP BY ALL
ORDER BY stage, n DESC, reason
