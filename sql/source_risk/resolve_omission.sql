-- Purpose: the endpoint R_O per tuple (the source-risk audit specification,
-- docs/references.md#source-risk-audit): NULL (unresolved) when any of I, A, M, D is
-- NULL, 1 exactly for (I, A, M, D) = (1, 1, 1, 0), else 0. The NULL guard comes first because
-- `I = 1 AND A = 1 AND M = 1 AND D = 0` is FALSE, not NULL, whenever one conjunct is false
-- and another unknown (SQL three-valued logic). Priority is not an input.
-- Grain: one row per input tuple. Input: sr_tuples (at least I, A, M, D as TINYINT).
SELECT
    t.*,
    CASE
        WHEN t.I IS NULL OR t.A IS NULL OR t.M IS NULL OR t.D IS NULL THEN NULL
        WHEN t.I = 1 AND t.A = 1 AND t.M = 1 AND t.D = 0 THEN 1
        ELSE 0
    END::TINYINT AS r_o
FROM sr_tuples AS t
