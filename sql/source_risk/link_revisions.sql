-- Purpose: the append-only ledger's lineage: drop exact duplicates, resolve each revision's
-- parent_record (a record digest, a raw-line digest or a canonical-JSON line digest, in this
-- batch or in earlier ledger partitions) to the parent's record digest, and reject a revision
-- whose parent is unknown or belongs to another tuple (a revision keeps the tuple digest).
-- Grain: one row per checked line (keys only), with its final defect (NULL when accepted).
-- Inputs: sr_checked, sr_line_canon(file, line, line_canonical_sha256),
-- sr_prior(record_digest, tuple_digest, line_sha256, line_canonical_sha256).
WITH c AS (
    SELECT
        k.file, k.line, k.defect_type, k.stage, k.reason, k.record_digest_calc, k.tuple_digest,
        k.line_sha256, k.parent_record,
        lc.line_canonical_sha256,
        CASE WHEN k.defect_type IS NULL THEN row_number() OVER (
            PARTITION BY k.defect_type IS NULL, k.record_digest_calc ORDER BY k.file, k.line)
        END AS dup_rank
    FROM sr_checked AS k
    LEFT JOIN sr_line_canon AS lc USING (file, line)
),
known AS (
    SELECT record_digest_calc AS record_digest, tuple_digest, line_sha256, line_canonical_sha256
    FROM c WHERE dup_rank = 1
    UNION ALL
    SELECT record_digest, tuple_digest, line_sha256, line_canonical_sha256 FROM sr_prior
),
keyed AS (
    SELECT k, min(record_digest) AS record_digest, min(tuple_digest) AS tuple_digest
    FROM (
        SELECT record_digest AS k, record_digest, tuple_digest FROM known
        UNION ALL SELECT line_sha256, record_digest, tuple_digest FROM known
        UNION ALL SELECT line_canonical_sha256, record_digest, tuple_digest FROM known
    )
    WHERE k IS NOT NULL
    GROUP BY k
),
linked AS (
    SELECT
        c.*,
        p.record_digest AS parent_record_digest,
        CASE
            WHEN c.defect_type IS NOT NULL THEN c.defect_type
            WHEN c.dup_rank > 1 THEN 'duplicate_record'
            WHEN c.parent_record IS NOT NULL AND p.record_digest IS NULL THEN 'orphan_revision'
            WHEN c.parent_record IS NOT NULL AND p.tuple_digest <> c.tuple_digest
                THEN 'revision_identity'
        END AS final_defect
    FROM c
    LEFT JOIN keyed AS p ON p.k = c.parent_record
)
SELECT
    l.file, l.line, l.line_canonical_sha256, l.parent_record_digest, l.final_defect,
    CASE WHEN l.final_defect IN ('duplicate_record', 'orphan_revision', 'revision_identity')
         THEN 'lineage' ELSE l.stage END AS final_stage,
    CASE l.final_defect
        WHEN 'duplicate_record' THEN 'the same record (digest ' || l.record_digest_calc
            || ') appears earlier; the ledger keeps one row per record digest'
        WHEN 'orphan_revision' THEN 'parent_record ' || l.parent_record
            || ' names no accepted record of this tuple'
        WHEN 'revision_identity' THEN 'parent ' || l.parent_record_digest
            || ' belongs to another tuple; a revision keeps the tuple digest'
        ELSE l.reason
    END AS final_reason
FROM linked AS l
ORDER BY l.file, l.line
