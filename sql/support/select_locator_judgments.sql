-- Purpose: the `locator` grader's labels: the evidence locator's view of a pair turned into a
-- label on the support rubric's scale. A page without readable text is unresolved (its cause
-- in reason). Otherwise the score is the claim's plain coverage (its content terms anywhere in
-- the page) + $coverage_weight × the atoms' mean best-passage coverage − $mismatch_penalty ×
-- the share of atoms with a hard mismatch: fully_supported at or above $pass, unsupported
-- below $fail, partially_supported between (weights and cuts: the codebook's graders
-- section, set on ExpertQA's calibration half). The locator cannot see a contradiction: it
-- never says contradicted.
-- Grain: one row per (claim_id, citation_id). Inputs: items (select_grader_items.sql);
-- $grader, $version, $digest, $coverage_weight, $mismatch_penalty, $pass, $fail.
WITH scored AS (
    SELECT *,
        coalesce(plain_coverage, 0) + $coverage_weight * coalesce(mean_coverage, 0)
            - $mismatch_penalty * coalesce(mismatch_share, 0) AS grader_score
    FROM items
)
SELECT answer_id, claim_id, citation_id, engine, domain,
    $grader AS grader, $version AS grader_version, $digest AS grader_digest,
    CASE
        WHEN n_unresolved > 0 THEN 'unresolved'
        WHEN grader_score >= $pass THEN 'fully_supported'
        WHEN grader_score < $fail THEN 'unsupported'
        ELSE 'partially_supported'
    END AS verdict,
    CASE WHEN n_unresolved > 0 THEN coalesce(page_reason, 'not_aligned') END AS reason,
    NULL::VARCHAR AS detail,
    NULL::DOUBLE AS confidence,
    CASE WHEN n_unresolved = 0 THEN grader_score END AS score,
    passage_text, capture_time,
    0::INTEGER AS attempts, 0::BIGINT AS input_tokens, 0::BIGINT AS output_tokens,
    NULL::VARCHAR AS request_sha256
FROM scored
ORDER BY claim_id, citation_id
