-- Purpose: the lineage outcome of one batch's accepted lines (link_revisions), in file and line
-- order, the order of the batch's ledger rows, to be put beside them by position.
-- Grain: one row per line of the batch that passed the ordered checks. Input: sr_linked.
-- Parameter: $batch (the batch's index).
SELECT
    file,
    line,
    parent_record_digest,
    line_canonical_sha256,
    final_defect,
    final_stage,
    final_reason
FROM sr_linked
WHERE batch = $batch
ORDER BY file, line
