-- Purpose: the reference path's counts (reference_metrics.py beside it, units held in memory as
-- one Arrow table): what count_metric_strata.sql gives, with the distinct answers, queries
-- and domains counted here by count(DISTINCT ...). Counts per (metric, stratum) and margins: the full stratum engine × domain ×
-- risk_band, then per engine, per domain and overall. Resolved units (y not null) make the
-- denominator; unresolved units are counted beside it, never inside. `total` is the sum of
-- y over resolved units (= the numerator of a 0/1 rate; total tokens for a mean). The
-- breakdown holds the unit count per category (L1 verdict, support verdict, policy action...).
-- Grain: one row per (metric, margin, engine, domain, risk_band). Input: metric_units.
SELECT
    metric,
    CASE GROUPING(engine, domain, risk_band)
        WHEN 0 THEN 'stratum'
        WHEN 3 THEN 'engine'
        WHEN 5 THEN 'domain'
        ELSE 'overall'
    END AS margin,
    CASE WHEN GROUPING(engine) = 1 THEN 'all' ELSE engine END AS engine,
    CASE WHEN GROUPING(domain) = 1 THEN 'all' ELSE domain END AS domain,
    CASE WHEN GROUPING(risk_band) = 1 THEN 'all' ELSE risk_band END AS risk_band,
    count(y)::BIGINT AS denominator,
    (count(*) - count(y))::BIGINT AS unresolved,
    coalesce(sum(y), 0)::DOUBLE AS total,
    count(DISTINCT answer_id) FILTER (WHERE y IS NOT NULL)::BIGINT AS n_answers,
    count(DISTINCT query_id) FILTER (WHERE y IS NOT NULL)::BIGINT AS n_queries,
    count(DISTINCT domain) FILTER (WHERE y IS NOT NULL)::BIGINT AS n_domains,
    min(inclusion_prob) FILTER (WHERE y IS NOT NULL) AS min_inclusion_prob,
    max(inclusion_prob) FILTER (WHERE y IS NOT NULL) AS max_inclusion_prob,
    to_json(histogram(coalesce(category, 'null')))::VARCHAR AS breakdown
FROM metric_units
GROUP BY GROUPING SETS (
    (metric, engine, domain, risk_band),
    (metric, engine),
    (metric, domain),
    (metric)
)
ORDER BY metric, margin, engine, domain, risk_band
