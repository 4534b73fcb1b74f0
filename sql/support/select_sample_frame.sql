-- Purpose: the review sample's frame: every cited (claim, citation) pair that grader $grader
-- labelled in one date × codebook, with its label (the grader_label stratification key).
-- Grain: one row per (claim_id, citation_id). Input: grader_judgments (one partition).
SELECT answer_id, claim_id, citation_id, engine, domain, verdict
FROM grader_judgments
WHERE grader = $grader
ORDER BY claim_id, citation_id
