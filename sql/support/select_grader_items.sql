-- Purpose: the items a grader labels: one per cited (claim, citation) pair of
-- support_evidence, with the claim text, the passage a grader sees (the distinct best
-- passages of the claim's atoms, in page order, joined by a blank line), when the page was
-- captured, why it is unavailable (NULL when readable), and the evidence locator's view of the
-- pair (its atoms' verdicts counted, the lowest atom score, plain coverage of the claim's
-- content terms anywhere in the page, the atoms' mean best-passage coverage, the share of
-- atoms with a hard mismatch).
-- Grain: one row per (claim_id, citation_id). Inputs: evidence (support_evidence), claims.
WITH pairs AS (
    SELECT answer_id, claim_id, citation_id, any_value(engine) AS engine,
        any_value(domain) AS domain, any_value(capture_time) AS capture_time,
        count(*)::INTEGER AS n_atoms,
        count(*) FILTER (WHERE verdict = 'evidence_located')::INTEGER AS n_located,
        count(*) FILTER (WHERE verdict IN ('no_evidence_in_page', 'mismatch_flagged'))::INTEGER
            AS n_against,
        count(*) FILTER (WHERE verdict = 'unresolved')::INTEGER AS n_unresolved,
        min(reason) FILTER (WHERE verdict = 'unresolved') AS page_reason,
        min(evidence_score) AS locator_score,
        sum(page_coverage * n_terms) / nullif(sum(n_terms), 0) AS plain_coverage,
        min(coverage) AS min_coverage,
        avg(coalesce(coverage, 0)) AS mean_coverage,
        avg(CASE WHEN len(mismatch_kinds) > 0 THEN 1.0 ELSE 0.0 END) AS mismatch_share,
        bool_or(len(mismatch_kinds) > 0) AS any_mismatch
    FROM evidence
    GROUP BY answer_id, claim_id, citation_id
),
passages AS (
    SELECT DISTINCT claim_id, citation_id, passage_start, passage_text
    FROM evidence
    WHERE passage_text IS NOT NULL
),
seen AS (
    SELECT claim_id, citation_id,
        string_agg(passage_text, chr(10) || chr(10) ORDER BY passage_start) AS passage_text
    FROM passages
    GROUP BY ALL
)
SELECT p.*, c.text AS claim_text, s.passage_text
FROM pairs AS p
LEFT JOIN seen AS s USING (claim_id, citation_id)
LEFT JOIN claims AS c USING (claim_id)
ORDER BY p.claim_id, p.citation_id
