-- Purpose: the `current` view of the append-only ledger: per tuple (and codebook, the
-- partition), the record no other record revises; when revisions fork, the latest annotation
-- wins (annotated_at_text, the annotation time as written, then record digest, so the choice
-- is deterministic).
-- Grain: one row per tuple_digest, unordered (score_endpoints, which reads it through the
-- resolve_omission view, sorts its output by tuple_digest once; a sort here as well cost
-- 10-20% of the endpoint step). Input: sr_ledger (source_risk_records rows).
WITH leaves AS (
    SELECT r.*
    FROM sr_ledger AS r
    WHERE r.record_digest NOT IN (
        SELECT parent_record FROM sr_ledger WHERE parent_record IS NOT NULL)
)
SELECT *
FROM leaves
QUALIFY row_number() OVER (PARTITION BY tuple_digest
                           ORDER BY annotated_at_text DESC NULLS LAST, record_digest DESC) = 1
