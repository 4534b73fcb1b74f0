-- Purpose: the `review_queue` table: every item support_labels queued for human review, with
-- the reason (tie, grader_only, unresolved, partial, high_risk_domain, sampled_supported) and
-- the evidence locator's view of it: the worst atom's verdict, coverage, best passage with the
-- atom's matched words marked [[like this]], URL and capture time. Ordered by the verdicts that
-- helped on the held-out ExpertQA half: no evidence in page first, then weak evidence, then
-- the rest by coverage (lowest first); mismatch flags did not separate decorative from true
-- citations there, so they do not move an item up. Unavailable pages and items without an
-- evidence row (evidence verdict unresolved) come last. Grain: one row per queued (claim_id, citation_id).
-- Inputs: support_labels (one partition), evidence (support_evidence, maybe empty).
WITH ranked AS (
    SELECT *,
        CASE verdict
            WHEN 'no_evidence_in_page' THEN 0 WHEN 'weak_evidence' THEN 1
            WHEN 'mismatch_flagged' THEN 2 WHEN 'evidence_located' THEN 2
            ELSE 3 END AS verdict_rank
    FROM evidence
),
worst AS (
    SELECT claim_id, citation_id, verdict, verdict_rank, coverage, passage_text, matched_terms,
        url, capture_time, mismatch_terms
    FROM ranked
    QUALIFY row_number() OVER (PARTITION BY claim_id, citation_id
                               ORDER BY verdict_rank, coverage NULLS LAST, atom_index) = 1
),
per_claim AS (
    SELECT claim_id, NULL::VARCHAR AS citation_id, verdict, verdict_rank, coverage, passage_text,
        matched_terms, url, capture_time, mismatch_terms
    FROM worst
    QUALIFY row_number() OVER (PARTITION BY claim_id
                               ORDER BY verdict_rank, coverage NULLS LAST, citation_id) = 1
),
items AS (
    SELECT * FROM worst UNION ALL SELECT * FROM per_claim
)
SELECT l.answer_id, l.claim_id, l.citation_id, l.grain, l.queue_reason AS reason, l.verdict,
    l.tie, l.disagreement, l.n_judgments, l.human_votes, l.grader_votes, l.engine, l.domain,
    l.high_risk,
    e.verdict AS evidence_verdict, e.coverage AS evidence_coverage,
    e.mismatch_terms AS evidence_mismatch_terms,
    e.passage_text AS evidence_passage,
    CASE WHEN e.passage_text IS NOT NULL THEN array_to_string(list_transform(
        regexp_extract_all(e.passage_text, '[\p{L}\p{N}]+|[^\p{L}\p{N}]+'),
        lambda w: CASE WHEN list_contains(e.matched_terms, evidence_terms(w, [])[1])
            THEN '[[' || w || ']]' ELSE w END), '') END AS evidence_passage_marked,
    e.url AS evidence_url, e.capture_time AS evidence_capture_time
FROM support_labels AS l
LEFT JOIN items AS e
    ON e.claim_id = l.claim_id AND e.citation_id IS NOT DISTINCT FROM l.citation_id
WHERE l.queued
ORDER BY coalesce(e.verdict_rank, 4), e.coverage NULLS LAST, l.claim_id, l.citation_id NULLS FIRST
