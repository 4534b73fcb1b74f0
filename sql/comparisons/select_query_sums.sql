-- Purpose: the sufficient statistics of every comparison: per metric, engine and query, the
-- units, the resolved ones (y not null, not NaN, as in the metrics), the unresolved ones, and
-- the sums of w*y and of w over the resolved (w = 1/inclusion_prob for a metric listed in
-- $weighted, 1 otherwise). A difference of two Hájek ratios and its cluster-robust variance
-- need nothing else, so earlier dates are read from these rows instead of recomputing their
-- units. Unresolved units are counted beside, never summed.
-- Grain: one row per (metric, engine, query_id) of the metric_units table.
WITH units AS (
    SELECT
        metric,
        engine,
        domain,
        query_id,
        y IS NOT NULL AND NOT isnan(y) AS resolved,
        y,
        CASE WHEN list_contains($weighted, metric) THEN 1.0 / inclusion_prob ELSE 1.0 END AS w
    FROM metric_units
    WHERE engine IS NOT NULL AND query_id IS NOT NULL
)
SELECT
    metric,
    engine,
    min(domain) AS domain,
    query_id,
    count(*)::BIGINT AS units,
    count(*) FILTER (WHERE resolved)::BIGINT AS resolved,
    count(*) FILTER (WHERE NOT resolved)::BIGINT AS unresolved,
    coalesce(sum(w * y) FILTER (WHERE resolved), 0.0) AS sum_wy,
    coalesce(sum(w) FILTER (WHERE resolved), 0.0) AS sum_w
FROM units
GROUP BY metric, engine, query_id
ORDER BY metric, engine, query_id
