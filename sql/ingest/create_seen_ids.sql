-- Purpose: the ids already taken by earlier batches of one date's answers, so a duplicate is
-- found even when its first occurrence was in another batch.
-- Grain: one row per (kind, id).
CREATE TEMP TABLE seen_ids (kind VARCHAR, id VARCHAR)
