-- Purpose: the append-only ledger's lineage over the key table of every batch: drop exact
-- duplicates (the first line of a record digest stays), resolve each revision's parent_record
-- (a record digest, a raw-line digest or a canonical-JSON line digest, anywhere in the input or
-- in earlier ledger partitions, before or after the child) to the parent's record digest, and
-- reject a revision whose parent is unknown or belongs to another tuple (a revision keeps the
-- tuple digest). Only digests some line names as its parent are looked up, so the work and
-- memory follow the revisions, not the ledger. Grain: one row per line that passed the ordered
-- checks, with its final defect (NULL when accepted), in batch and line order.
-- Inputs: sr_line_keys, sr_line_canon(file, line, line_canonical_sha256),
-- sr_prior(record_digest, tuple_digest, line_sha256, line_canonical_sha256).
WITH firsts AS (
    SELECT record_digest, min(struct_pack(file := file, line := line)) AS first_line
    FROM sr_line_keys
    GROUP BY record_digest
    HAVING count(*) > 1
),
c AS (
    SELECT
        k.batch, k.file, k.line, k.record_digest, k.tuple_digest, k.line_sha256,
        k.parent_record, k.parent_key,
        lc.line_canonical_sha256,
        unhex(lc.line_canonical_sha256) AS line_canonical,
        coalesce(f.first_line <> struct_pack(file := k.file, line := k.line), false)
            AS duplicate
    FROM sr_line_keys AS k
    LEFT JOIN firsts AS f USING (record_digest)
    LEFT JOIN sr_line_canon AS lc USING (file, line)
),
wanted AS (
    SELECT DISTINCT parent_key AS k FROM sr_line_keys WHERE parent_key IS NOT NULL
),
known AS (
    SELECT record_digest, tuple_digest, line_sha256, line_canonical
    FROM c WHERE NOT duplicate
    UNION ALL
    SELECT unhex(record_digest), unhex(tuple_digest), unhex(line_sha256),
        unhex(line_canonical_sha256)
    FROM sr_prior
),
keyed AS (
    SELECT k, min(record_digest) AS record_digest, min(tuple_digest) AS tuple_digest
    FROM (
        SELECT record_digest AS k, record_digest, tuple_digest FROM known
        UNION ALL SELECT line_sha256, record_digest, tuple_digest FROM known
        UNION ALL SELECT line_canonical, record_digest, tuple_digest FROM known
    )
    WHERE k IN (SELECT k FROM wanted)
    GROUP BY k
),
linked AS (
    SELECT
        c.batch, c.file, c.line, c.record_digest, c.parent_record, c.line_canonical_sha256,
        p.record_digest AS parent_digest,
        CASE
            WHEN c.duplicate THEN 'duplicate_record'
            WHEN c.parent_record IS NOT NULL AND p.record_digest IS NULL THEN 'orphan_revision'
            WHEN c.parent_record IS NOT NULL AND p.tuple_digest <> c.tuple_digest
                THEN 'revision_identity'
        END AS final_defect
    FROM c
    LEFT JOIN keyed AS p ON p.k = c.parent_key
)
SELECT
    l.batch, l.file, l.line, l.line_canonical_sha256,
    lower(hex(l.parent_digest)) AS parent_record_digest,
    l.final_defect,
    CASE WHEN l.final_defect IS NOT NULL THEN 'lineage' END AS final_stage,
    CASE l.final_defect
        WHEN 'duplicate_record' THEN 'the same record (digest ' || lower(hex(l.record_digest))
            || ') appears earlier; the ledger keeps one row per record digest'
        WHEN 'orphan_revision' THEN 'parent_record ' || l.parent_record
            || ' names no accepted record of this tuple'
        WHEN 'revision_identity' THEN 'parent ' || lower(hex(l.parent_digest))
            || ' belongs to another tuple; a revision keeps the tuple digest'
    END AS final_reason
FROM linked AS l
ORDER BY l.batch, l.file, l.line
