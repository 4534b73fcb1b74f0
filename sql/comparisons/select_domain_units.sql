-- Purpose: the units of the per-domain view (cited_domains): every citation whose URL has a
-- domain, with its answer's engine and query, and three outcomes, each NULL when unresolved
-- (never 0): dead and changed (L1: only the resolved verdicts pass, dead and changed count;
-- unresolved or no existence row is unresolved), unsupported (the adjudicated human support
-- label of the claim-citation pair: unsupported or contradicted = 1, fully or partially
-- supported = 0; no label, a tie or a grader-only label is unresolved).
-- Grain: one row per citation with a cited domain. Inputs: citations, answers, url_domains
-- (url -> cited_domain, from Python), citation_existence and support_labels (registered
-- empty when not materialized).
SELECT
    c.citation_id,
    c.answer_id,
    a.engine,
    a.query_id,
    d.cited_domain,
    CASE WHEN e.verdict IN ('pass', 'dead', 'changed') THEN (e.verdict = 'dead')::INTEGER END
        AS dead,
    CASE WHEN e.verdict IN ('pass', 'dead', 'changed') THEN (e.verdict = 'changed')::INTEGER END
        AS changed,
    CASE
        WHEN coalesce(s.basis, 'human') <> 'grader_only'
            AND s.verdict IN ('fully_supported', 'partially_supported', 'unsupported',
                              'contradicted')
            THEN (s.verdict IN ('unsupported', 'contradicted'))::INTEGER
    END AS unsupported
FROM citations AS c
JOIN answers AS a USING (answer_id)
JOIN url_domains AS d ON d.url = c.url
LEFT JOIN citation_existence AS e ON e.citation_id = c.citation_id
-- a claim-grain label has no citation_id, so only the pair's own label joins
LEFT JOIN support_labels AS s ON s.citation_id = c.citation_id AND s.claim_id = c.claim_id
