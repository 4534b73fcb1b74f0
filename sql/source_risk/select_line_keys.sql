-- Purpose: the lineage key table: per line of one batch that passed the ordered checks, its
-- record, tuple and raw-line digests as 32-byte values and the parent it names (kept as
-- written, and as 32 bytes when it is a lower-case hex digest, the only form any key has).
-- Grain: one row per line that passed. Input: sr_checked. Parameter: $batch (the batch's index).
SELECT
    $batch::INTEGER AS batch,
    file,
    line,
    unhex(record_digest_calc) AS record_digest,
    unhex(tuple_digest) AS tuple_digest,
    unhex(line_sha256) AS line_sha256,
    parent_record,
    CASE WHEN regexp_full_match(parent_record, '[0-9a-f]{64}') THEN unhex(parent_record) END
        AS parent_key
FROM sr_checked
WHERE defect_type IS NULL
