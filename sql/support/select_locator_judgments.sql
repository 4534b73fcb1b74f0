-- Purpose: the `locator` grader's labels: the evidence locator's atom verdicts of a pair
-- turned into a label on the support rubric's scale. A page without readable text is
-- unresolved (its cause in reason); every atom located = fully_supported; every atom with
-- no evidence in the page or a hard mismatch = unsupported; anything else (weak evidence, some
-- atoms located) = partially_supported. The locator cannot see a contradiction: it never says
-- contradicted. score is the lowest atom evidence_score (coverage, minus 1 when flagged).
-- Grain: one row per (claim_id, citation_id). Inputs: items (select_grader_items.sql);
-- $grader, $version, $digest.
SELECT answer_id, claim_id, citation_id, engine, domain,
    $grader AS grader, $version AS grader_version, $digest AS grader_digest,
    CASE
        WHEN n_unresolved > 0 THEN 'unresolved'
        WHEN n_located = n_atoms THEN 'fully_supported'
        WHEN n_against = n_atoms THEN 'unsupported'
        ELSE 'partially_supported'
    END AS verdict,
    CASE WHEN n_unresolved > 0 THEN coalesce(page_reason, 'not_aligned') END AS reason,
    NULL::VARCHAR AS detail,
    NULL::DOUBLE AS confidence,
    locator_score AS score,
    passage_text, capture_time,
    0::INTEGER AS attempts, 0::BIGINT AS input_tokens, 0::BIGINT AS output_tokens,
    NULL::VARCHAR AS request_sha256
FROM items
ORDER BY claim_id, citation_id
