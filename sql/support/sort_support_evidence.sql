-- Purpose: the `support_evidence` rows the evidence locator spilled in page batches, back in
-- the table's order, so the bounded-memory path writes the same table as the whole one.
-- Grain: one row per (claim_id, citation_id, atom_index). Input: the spill file $spill.
SELECT * FROM read_parquet($spill)
ORDER BY claim_id, citation_id, atom_index
