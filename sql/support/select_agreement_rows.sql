-- Purpose: the judgments agreement is computed on, each repeated once per stratum it belongs
-- to ('overall', 'engine=<e>', 'domain=<d>'), with the item's adjudicated (gold) label.
-- Grain: one row per (stratum, judgment). Items are (claim, citation, atom).
-- Inputs: j (support_judgments of one partition), l (support_labels of the same partition).
WITH base AS (
    SELECT
        j.claim_id || '|' || coalesce(j.citation_id, '') || '|' || coalesce(j.atom_id, '')
            AS item,
        j.annotator_id, j.grader, j.is_human, j.verdict AS label,
        coalesce(l.engine, 'unknown') AS engine, coalesce(l.domain, 'unknown') AS domain,
        -- gold for a grader: a human, non-tied adjudication of a single-atom item
        CASE WHEN NOT l.tie AND l.basis = 'human' AND l.n_atoms = 1 THEN l.verdict END AS gold
    FROM j
    JOIN l ON l.claim_id = j.claim_id
        AND coalesce(l.citation_id, '') = coalesce(j.citation_id, '')
)
SELECT 'overall' AS stratum, * FROM base
UNION ALL
SELECT 'engine=' || engine, * FROM base
UNION ALL
SELECT 'domain=' || domain, * FROM base
