-- Purpose: the tuple and record digests computed for every typed line, accepted or not
-- (sealing a record = validating it and storing these). Grain: one row per typed line.
-- Input: sr_checked.
SELECT file, line, tuple_digest_calc AS tuple_digest, record_digest_calc AS record_digest
FROM sr_checked
ORDER BY file, line
