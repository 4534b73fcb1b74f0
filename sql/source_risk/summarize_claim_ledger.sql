-- Purpose: the claim ledger: the endpoint outputs of current tuples gathered per claim, kept
-- tuple-local (counts and the tuples' digests; no claim-level verdict is invented).
-- Grain: one row per (answer_id, claim_id); claim_id NULL for tuples not tied to a claim.
-- Input: sr_endpoints (omission_endpoints rows).
SELECT
    answer_id,
    claim_id,
    min(query_id) AS query_id,
    count(*)::INTEGER AS n_tuples,
    count(*) FILTER (WHERE r_o = 1)::INTEGER AS n_omission,
    count(*) FILTER (WHERE r_o = 0)::INTEGER AS n_no_omission,
    count(*) FILTER (WHERE r_o IS NULL)::INTEGER AS n_unresolved,
    max(priority) AS max_priority,
    count(*) FILTER (WHERE policy_action = 'PASS')::INTEGER AS n_pass,
    count(*) FILTER (WHERE policy_action = 'CONTEXTUALIZE')::INTEGER AS n_contextualize,
    count(*) FILTER (WHERE policy_action = 'REVIEW')::INTEGER AS n_review,
    count(*) FILTER (WHERE policy_action = 'ABSTAIN')::INTEGER AS n_abstain,
    list(tuple_digest ORDER BY tuple_digest) AS tuple_digests,
    list(record_digest ORDER BY tuple_digest) AS record_digests
FROM sr_endpoints
GROUP BY answer_id, claim_id
ORDER BY answer_id, claim_id NULLS FIRST
