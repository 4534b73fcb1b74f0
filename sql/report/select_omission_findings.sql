-- Purpose: the omission findings the report lists: tuples with R_O = 1, unresolved tuples and
-- any tuple whose policy action is not PASS, highest review priority first.
-- Grain: one row per tuple (at most $limit), with the total count. Inputs: omission_endpoints,
-- answers (engine).
SELECT
    a.engine,
    o.answer_id,
    o.source_url,
    o.source_role,
    o.r_o,
    o.priority,
    o.policy_action,
    count(*) OVER () AS n_total
FROM omission_endpoints AS o
LEFT JOIN answers AS a USING (answer_id)
WHERE o.r_o = 1 OR o.r_o IS NULL OR o.policy_action IS DISTINCT FROM 'PASS'
ORDER BY o.priority DESC NULLS LAST, o.tuple_digest
LIMIT $limit
