-- Purpose: the `review_queue` table: every item support_labels queued for human review, with
-- the reason (tie, grader_only, unresolved, partial, high_risk_domain, sampled_supported).
-- Grain: one row per queued (claim_id, citation_id). Input: support_labels (one partition).
SELECT answer_id, claim_id, citation_id, level, queue_reason AS reason, label, tie,
    disagreement, n_judgments, human_votes, grader_votes, engine, domain, high_risk
FROM support_labels
WHERE queued
ORDER BY claim_id, citation_id NULLS FIRST
