-- Purpose: the sufficient statistics of every comparison: per metric, engine and query, the
-- units, the resolved ones (y not null, not NaN, as in the metrics), the unresolved ones, and
-- the sums of w*y and of w over the resolved (w = 1/inclusion_prob for a metric listed in
-- $weighted, 1 otherwise). A difference of two Hájek ratios and its cluster-robust variance
-- need nothing else, so earlier dates are read from these rows instead of recomputing their
-- units. Unresolved units are counted beside, never summed.
-- The answer's system_version (answer_versions: answer_id, system_version; null when not
-- given) splits a query's units by version, for the before/after comparison of versions.
-- Grain: one row per (metric, engine, system_version, query_id) of the metric_units table.
WITH units AS (
    SELECT
        u.metric,
        u.engine,
        u.domain,
        v.system_version,
        u.query_id,
        u.y IS NOT NULL AND NOT isnan(u.y) AS resolved,
        u.y,
        CASE WHEN list_contains($weighted, u.metric) THEN 1.0 / u.inclusion_prob ELSE 1.0 END
            AS w
    FROM metric_units AS u
    LEFT JOIN answer_versions AS v USING (answer_id)
    WHERE u.engine IS NOT NULL AND u.query_id IS NOT NULL
)
SELECT
    metric,
    engine,
    min(domain) AS domain,
    system_version,
    query_id,
    count(*)::BIGINT AS units,
    count(*) FILTER (WHERE resolved)::BIGINT AS resolved,
    count(*) FILTER (WHERE NOT resolved)::BIGINT AS unresolved,
    coalesce(sum(w * y) FILTER (WHERE resolved), 0.0) AS sum_wy,
    coalesce(sum(w) FILTER (WHERE resolved), 0.0) AS sum_w
FROM units
GROUP BY metric, engine, system_version, query_id
ORDER BY metric, engine, system_version NULLS FIRST, query_id
