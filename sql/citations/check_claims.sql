-- Purpose: the fail-closed citation check (the fail-closed verification rule,
-- docs/references.md#fail-closed-verification) for every claim of every accepted answer:
-- verdict pass, fail with the first failure's reason, unresolved or exempt.
-- Grain: one row per claim. Inputs: answers, claims, citations (one observation date).
-- Rules: a tag half is well formed when non-empty with no colon and no whitespace; tags need
-- brackets, "[DocID:ChunkID]". An answer that lists context_chunk_ids (a RAG system) must cite
-- by tag, and a well-formed tag whose ChunkID is not in that list is hallucinated. A citation
-- without a tag in an answer without context (a web engine) is malformed unless its url is an
-- absolute http(s) URL with a host; whether the page exists is L1's question, not this one.
-- Within a claim the first failing citation (by position) gives the claim's reason.
-- The rule's "every claim is cited" holds where the rule was written for: an answer that
-- declares its context (a RAG system) or a claim marked verification_worthy = true. There an
-- uncited claim fails (missing_citation). Elsewhere (a web engine's sentence) an uncited claim
-- whose worthiness nobody judged is unresolved (worthiness_unknown: never a pass, never a
-- rejection), and one judged not worthy is exempt (not_verification_worthy).
-- worthiness_signal names the rule a claim's text meets that marks text rarely worth a
-- citation (a question, an offer, a heading, boilerplate): a grader signal for review and for
-- reading unresolved claims, measured against Liu et al.'s worthiness labels (tests), never a
-- verdict and never used by the gate.
WITH cited AS (
    SELECT
        c.answer_id,
        c.claim_id,
        c.citation_id,
        c.citation_index,
        a.context_chunk_ids IS NOT NULL AS context_known,
        regexp_extract(c.tag, '^\[([^:\s]+):([^:\s]+)\]$', 2) AS chunk_id,
        CASE
            WHEN c.tag IS NOT NULL OR a.context_chunk_ids IS NOT NULL
                THEN coalesce(regexp_full_match(c.tag, '\[[^:\s]+:[^:\s]+\]'), false)
            ELSE coalesce(regexp_full_match(c.url, '(?i)https?://[^\s/?#]+([/?#]\S*)?'), false)
        END AS well_formed,
        a.context_chunk_ids
    FROM citations AS c
    JOIN answers AS a USING (answer_id)
),
citation_status AS (
    SELECT
        answer_id,
        claim_id,
        citation_id,
        citation_index,
        context_known,
        CASE
            WHEN NOT well_formed THEN 'malformed_citation'
            WHEN context_known AND NOT list_contains(context_chunk_ids, chunk_id)
                THEN 'hallucinated_citation'
        END AS reason
    FROM cited
),
first_failure AS (
    SELECT answer_id, claim_id,
        arg_min(reason, citation_index) AS reason,
        arg_min(citation_id, citation_index) AS citation_id,
        min(citation_index) AS citation_index
    FROM citation_status
    WHERE reason IS NOT NULL
    GROUP BY answer_id, claim_id
)
SELECT
    cl.answer_id,
    cl.claim_id,
    cl.claim_index,
    a.engine,
    cl.n_citations,
    CASE
        WHEN cl.n_citations > 0 THEN (CASE WHEN f.reason IS NULL THEN 'pass' ELSE 'fail' END)
        WHEN a.context_chunk_ids IS NOT NULL OR cl.verification_worthy THEN 'fail'
        WHEN cl.verification_worthy IS NULL THEN 'unresolved'
        ELSE 'exempt'
    END AS verdict,
    CASE
        WHEN cl.n_citations > 0 THEN f.reason
        WHEN a.context_chunk_ids IS NOT NULL OR cl.verification_worthy THEN 'missing_citation'
        WHEN cl.verification_worthy IS NULL THEN 'worthiness_unknown'
        ELSE 'not_verification_worthy'
    END AS reason,
    CASE WHEN cl.n_citations = 0 THEN NULL ELSE f.citation_id END AS failing_citation_id,
    CASE WHEN cl.n_citations = 0 THEN NULL ELSE f.citation_index END AS failing_citation_index,
    a.context_chunk_ids IS NOT NULL AS hallucination_checked,
    -- a rule-based worthiness grader: a signal for review, never gold and never a verdict
    CASE
        WHEN regexp_matches(cl.text, '\?\s*$') THEN 'question'
        WHEN regexp_matches(cl.text, '(?i)^\s*(would you like|do you want|let me know|if you(''d| would) like|feel free|i can (also )?(help|provide|give|show|look)|i hope this helps|is there anything)')
            THEN 'offer'
        WHEN regexp_matches(cl.text, '(:\s*$)|(^\s*#)') THEN 'heading'
        WHEN regexp_matches(cl.text, '(?i)^\s*(short answer|in (summary|short|conclusion)|here (is|are)\b|sure[,!.]|certainly[,!.]|great question|hello\b|hi[,!])')
            THEN 'boilerplate'
    END AS worthiness_signal
FROM claims AS cl
JOIN answers AS a USING (answer_id)
LEFT JOIN first_failure AS f USING (answer_id, claim_id)
ORDER BY cl.answer_id, cl.claim_index
