-- Purpose: claim-level evidence of a (claim, citation) pair from its atoms' support_evidence
-- rows: located when every atom is evidence_located, flagged when any atom's verdict is in
-- $flagged, the lowest atom evidence_score and coverage, and plain content-word coverage
-- (the share of the claim's content terms the page has anywhere, a baseline).
-- Grain: one row per (claim_id, citation_id). Input: rows (support_evidence rows).
SELECT claim_id, citation_id,
    bool_and(verdict = 'evidence_located') AS located,
    bool_or(list_contains($flagged, verdict)) AS flagged,
    bool_or(verdict = 'unresolved') AS unavailable,
    min(evidence_score) AS score,
    min(coverage) AS coverage,
    sum(page_coverage * n_terms) / nullif(sum(n_terms), 0) AS plain_coverage,
    avg(coalesce(coverage, 0)) AS mean_coverage,
    avg(CASE WHEN len(mismatch_kinds) > 0 THEN 1.0 ELSE 0.0 END) AS mismatch_share,
    list(DISTINCT verdict ORDER BY verdict) AS signals
FROM rows
GROUP BY ALL
ORDER BY claim_id, citation_id
