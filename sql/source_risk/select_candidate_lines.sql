-- Purpose: the raw text of the parent candidates (select_parent_candidates), for their
-- canonical-JSON line digest. Grain: one row per candidate line.
-- Inputs: sr_candidates(file, line), sr_spool.
SELECT s.file, s.line, s.raw
FROM sr_spool AS s
SEMI JOIN sr_candidates AS c USING (file, line)
ORDER BY s.file, s.line
