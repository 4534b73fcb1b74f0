-- Purpose: the `support_labels` table: each judged (claim, citation) pair adjudicated over its
-- human annotators per atomic proposition (majority; a tie is unresolved and queued; the votes
-- and each annotator's verdict are kept), then aggregated over the claim's atoms (the
-- three-layer audit's L2 support layer, docs/references.md#three-layer-audit:
-- any contradicted → contradicted; else any unresolved → unresolved; all fully → fully; all
-- unsupported → unsupported; else partially supported, queued), and the review decision:
-- partial, tied and unresolved items, items judged only by a grader, every item of a high-risk
-- domain ($high_risk), and a deterministic sample of fully supported ones at $rate (md5 of
-- $seed and the item key). A grader's verdicts are kept beside, never counted as votes.
-- Grain: one row per (claim_id, citation_id) judged; citation_id NULL = claim-grain judgment.
-- Inputs: support_judgments (one date, one codebook), answers (answer_id, engine, domain).
WITH
atoms AS (
    SELECT answer_id, claim_id, citation_id, coalesce(atom_id, '') AS atom,
        count(*) FILTER (WHERE is_human) AS n_human,
        count(*) FILTER (WHERE is_human AND verdict = 'fully_supported') AS v_full,
        count(*) FILTER (WHERE is_human AND verdict = 'partially_supported') AS v_partial,
        count(*) FILTER (WHERE is_human AND verdict = 'unsupported') AS v_unsup,
        count(*) FILTER (WHERE is_human AND verdict = 'contradicted') AS v_contra,
        count(*) FILTER (WHERE is_human AND verdict = 'unresolved') AS v_unres,
        count(DISTINCT verdict) FILTER (WHERE is_human) AS n_distinct,
        count(*) FILTER (WHERE NOT is_human) AS n_grader,
        string_agg(annotator_id || '=' || verdict, ';' ORDER BY annotator_id)
            FILTER (WHERE is_human) AS human_votes,
        string_agg(annotator_id || '=' || verdict, ';' ORDER BY annotator_id)
            FILTER (WHERE NOT is_human) AS grader_votes
    FROM support_judgments
    GROUP BY ALL
),
atom_top AS (
    SELECT *,
        greatest(v_full, v_partial, v_unsup, v_contra, v_unres) AS top,
        (v_full = greatest(v_full, v_partial, v_unsup, v_contra, v_unres))::INT
        + (v_partial = greatest(v_full, v_partial, v_unsup, v_contra, v_unres))::INT
        + (v_unsup = greatest(v_full, v_partial, v_unsup, v_contra, v_unres))::INT
        + (v_contra = greatest(v_full, v_partial, v_unsup, v_contra, v_unres))::INT
        + (v_unres = greatest(v_full, v_partial, v_unsup, v_contra, v_unres))::INT AS n_top
    FROM atoms
),
atom_labels AS (
    SELECT *,
        n_human > 0 AND n_top > 1 AS tie,
        CASE
            WHEN n_human = 0 OR n_top > 1 THEN 'unresolved'
            WHEN v_full = top THEN 'fully_supported'
            WHEN v_partial = top THEN 'partially_supported'
            WHEN v_unsup = top THEN 'unsupported'
            WHEN v_contra = top THEN 'contradicted'
            ELSE 'unresolved'
        END AS atom_label
    FROM atom_top
),
items AS (
    SELECT answer_id, claim_id, citation_id,
        count(*)::INTEGER AS n_atoms,
        sum(n_human)::INTEGER AS n_judgments,
        sum(v_full)::INTEGER AS n_fully_supported,
        sum(v_partial)::INTEGER AS n_partially_supported,
        sum(v_unsup)::INTEGER AS n_unsupported,
        sum(v_contra)::INTEGER AS n_contradicted,
        sum(v_unres)::INTEGER AS n_unresolved,
        sum(n_grader)::INTEGER AS n_grader_judgments,
        bool_or(tie) AS tie,
        bool_or(n_distinct > 1) AS disagreement,
        min(n_human) = 0 AS grader_only,
        CASE
            WHEN bool_or(atom_label = 'contradicted') THEN 'contradicted'
            WHEN bool_or(atom_label = 'unresolved') THEN 'unresolved'
            WHEN bool_and(atom_label = 'fully_supported') THEN 'fully_supported'
            WHEN bool_and(atom_label = 'unsupported') THEN 'unsupported'
            ELSE 'partially_supported'
        END AS verdict,
        string_agg(CASE WHEN atom = '' THEN human_votes ELSE atom || ':' || human_votes END,
            ' | ' ORDER BY atom) AS human_votes,
        string_agg(CASE WHEN atom = '' THEN grader_votes ELSE atom || ':' || grader_votes END,
            ' | ' ORDER BY atom) AS grader_votes
    FROM atom_labels
    GROUP BY ALL
),
decided AS (
    SELECT i.*, a.engine, a.domain,
        coalesce(a.domain IN (SELECT unnest($high_risk::VARCHAR[])), false) AS high_risk,
        (md5_number($seed || ':' || i.claim_id || ':' || coalesce(i.citation_id, ''))
            % 1000000)::DOUBLE / 1000000 < $rate AS sampled
    FROM items AS i
    LEFT JOIN answers AS a USING (answer_id)
)
SELECT
    answer_id, claim_id, citation_id,
    CASE WHEN citation_id IS NULL THEN 'claim' ELSE 'citation' END AS grain,
    verdict, n_judgments, n_atoms,
    n_fully_supported, n_partially_supported, n_unsupported, n_contradicted, n_unresolved,
    tie, disagreement,
    CASE WHEN grader_only THEN 'grader_only' ELSE 'human' END AS basis,
    human_votes, n_grader_judgments, grader_votes,
    engine, domain, high_risk,
    CASE
        WHEN tie THEN 'tie'
        WHEN grader_only THEN 'grader_only'
        WHEN verdict = 'unresolved' THEN 'unresolved'
        WHEN verdict = 'partially_supported' THEN 'partial'
        WHEN high_risk THEN 'high_risk_domain'
        WHEN verdict = 'fully_supported' AND sampled THEN 'sampled_supported'
    END AS queue_reason,
    queue_reason IS NOT NULL AS queued
FROM decided
ORDER BY claim_id, citation_id NULLS FIRST
