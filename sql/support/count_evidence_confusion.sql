-- Purpose: the evidence locator as a grader: for each (claim, citation) pair with a human,
-- non-tied adjudicated verdict, the pair's locator verdict (its worst atom: mismatch_flagged,
-- then no_evidence_in_page, weak_evidence, evidence_located; unresolved, the page unavailable,
-- only when every atom is) against that gold verdict, counted per stratum ('overall', 'engine=<e>', 'domain=<d>').
-- The locator's rows never enter the gold. Grain: one row per (stratum, grader, locator verdict, gold verdict).
-- Inputs: evidence (support_evidence), l (support_labels of the same partition).
WITH pair AS (
    SELECT claim_id, citation_id, any_value(grader) AS grader,
        arg_min(verdict, CASE verdict
            WHEN 'mismatch_flagged' THEN 0 WHEN 'no_evidence_in_page' THEN 1
            WHEN 'weak_evidence' THEN 2 WHEN 'evidence_located' THEN 3 ELSE 4 END) AS verdict
    FROM evidence
    GROUP BY claim_id, citation_id
),
base AS (
    SELECT p.grader, p.verdict, l.verdict AS gold,
        coalesce(l.engine, 'unknown') AS engine, coalesce(l.domain, 'unknown') AS domain
    FROM pair AS p
    JOIN l ON l.claim_id = p.claim_id AND l.citation_id = p.citation_id
    WHERE NOT l.tie AND l.basis = 'human' AND l.verdict IS NOT NULL
),
strata AS (
    SELECT 'overall' AS stratum, * FROM base
    UNION ALL SELECT 'engine=' || engine, * FROM base
    UNION ALL SELECT 'domain=' || domain, * FROM base
)
SELECT stratum, grader, verdict AS label_a, gold AS label_b, count(*)::INTEGER AS n
FROM strata
GROUP BY ALL
ORDER BY ALL
