-- Purpose: the lines that may be the parent of a revision whose parent_record matches no
-- record digest and no raw-line digest: lines of the same tuple. Only these get the (costly)
-- canonical-JSON line digest in Python, the form an annotation tool that knows nothing of the
-- pipeline can compute. Grain: one row per candidate line (keys only).
-- Inputs: sr_line_keys (every batch), sr_prior.
WITH keys AS (
    SELECT record_digest AS k FROM sr_line_keys
    UNION SELECT line_sha256 FROM sr_line_keys
    UNION SELECT unhex(record_digest) FROM sr_prior
    UNION SELECT unhex(line_sha256) FROM sr_prior
),
unmatched AS (
    SELECT DISTINCT tuple_digest FROM sr_line_keys
    WHERE parent_record IS NOT NULL
        AND (parent_key IS NULL
             OR parent_key NOT IN (SELECT k FROM keys WHERE k IS NOT NULL))
)
SELECT file, line
FROM sr_line_keys
WHERE tuple_digest IN (SELECT tuple_digest FROM unmatched)
ORDER BY file, line
