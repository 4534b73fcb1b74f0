-- Purpose: `omission_endpoints`: review priority (the codebook-weighted evidence vector, computed
-- after R_O and never fed back into it) and the policy action: REVIEW for every unresolved
-- tuple; ABSTAIN only when an explicit codebook rule matches a resolved tuple; CONTEXTUALIZE for
-- a resolved omission, or when the role requires disclosure, a relationship is established and
-- not disclosed, and priority exceeds the codebook threshold; PASS otherwise.
-- Grain: one row per current tuple. Inputs: sr_resolved (resolve_omission output over current
-- records), sr_rules(rule_index, name, r_o, source_roles, min_priority).
-- Parameters: $contextualize_above, $disclosure_roles.
WITH scored AS (
    SELECT
        r.*,
        list_sum(list_transform(map_keys(r.weights),
                                lambda k: r.weights[k] * r.dimensions[k]))::DOUBLE AS priority
    FROM sr_resolved AS r
),
ruled AS (
    SELECT
        s.*,
        (SELECT arg_min(u.name, u.rule_index) FROM sr_rules AS u
         WHERE s.r_o IS NOT NULL
           AND (u.r_o IS NULL OR u.r_o = s.r_o)
           AND (u.source_roles IS NULL OR list_contains(u.source_roles, s.source_role))
           AND (u.min_priority IS NULL OR s.priority >= u.min_priority)) AS abstain_rule
    FROM scored AS s
)
SELECT
    tuple_digest,
    record_digest,
    parent_record,
    query_id,
    answer_id,
    claim_id,
    source_url,
    canonical_url,
    source_role,
    codebook_version,
    annotator_id,
    I, A, M, D,
    r_o,
    CASE WHEN r_o IS NULL THEN 'unresolved' WHEN r_o = 1 THEN 'omission'
         ELSE 'no_omission' END AS verdict,
    priority,
    CASE
        WHEN r_o IS NULL THEN 'REVIEW'
        WHEN abstain_rule IS NOT NULL THEN 'ABSTAIN'
        WHEN r_o = 1 THEN 'CONTEXTUALIZE'
        WHEN list_contains($disclosure_roles, source_role) AND I = 1 AND D = 0
             AND priority > $contextualize_above THEN 'CONTEXTUALIZE'
        ELSE 'PASS'
    END AS policy_action,
    abstain_rule,
    validation_gate
FROM ruled
ORDER BY tuple_digest
