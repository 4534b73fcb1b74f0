-- Purpose: pairs for validating a grader against people: every claim-citation pair of the
-- views with an adjudicated human verdict that settles it (basis human, not unresolved) and
-- a label of grader $grader on the same date.
-- Grain: one row per (observation_date, claim_id, citation_id).
-- Inputs: support_labels, grader_judgments (every date of one codebook, hive columns).
SELECT l.observation_date, l.answer_id, l.claim_id, l.citation_id, l.engine, l.domain,
    l.verdict AS human, g.verdict AS grader
FROM support_labels AS l
JOIN grader_judgments AS g
    ON g.observation_date = l.observation_date AND g.claim_id = l.claim_id
    AND g.citation_id = l.citation_id AND g.grader = $grader
WHERE l.basis = 'human' AND l.verdict <> 'unresolved' AND l.citation_id IS NOT NULL
ORDER BY l.observation_date, l.claim_id, l.citation_id
