-- Purpose: the accepted lines that may be the parent of a revision whose parent_record matches
-- no record digest and no raw-line digest: lines of the same tuple. Only these get the (costly)
-- canonical-JSON line digest in Python, the form an annotation tool that knows nothing of the
-- pipeline can compute. Grain: one row per candidate line.
-- Inputs: sr_checked, sr_lines, sr_prior.
WITH ok AS (
    SELECT c.file, c.line, l.raw, c.tuple_digest, c.record_digest_calc, c.line_sha256,
        c.parent_record
    FROM sr_checked AS c
    JOIN sr_lines AS l USING (file, line)
    WHERE c.defect_type IS NULL
),
keys AS (
    SELECT record_digest_calc AS k FROM ok
    UNION SELECT line_sha256 FROM ok
    UNION SELECT record_digest FROM sr_prior
    UNION SELECT line_sha256 FROM sr_prior
),
unmatched AS (
    SELECT DISTINCT tuple_digest FROM ok
    WHERE parent_record IS NOT NULL AND parent_record NOT IN (SELECT k FROM keys WHERE k IS NOT NULL)
)
SELECT file, line, raw
FROM ok
WHERE tuple_digest IN (SELECT tuple_digest FROM unmatched)
ORDER BY file, line
