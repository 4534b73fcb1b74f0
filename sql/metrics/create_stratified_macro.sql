-- Purpose: the strata join the unit queries over judged tables share (passage checks, support
-- labels, metadata checks, omission endpoints, support judgments): `stratified(judged)` takes a
-- table or CTE of judged units (metric, unit_id, answer_id, y, category) and adds the unit's
-- strata from `answers` (query, engine, domain, risk band, inclusion probability). A unit whose
-- answer is not among the date's answers keeps its row (never dropped): its strata are
-- 'unknown', its y null (unresolved) and its category answer_not_on_date.
-- Grain: one row per judged unit, in the shape of metric_units (plus unit_id).
-- Input: answers (a view registered by citeaudit.metrics.inputs.register).
CREATE OR REPLACE TEMP MACRO stratified(judged) AS TABLE
SELECT
    u.metric,
    u.unit_id,
    u.answer_id,
    a.query_id,
    coalesce(a.engine, 'unknown') AS engine,
    coalesce(a.domain, 'unknown') AS domain,
    coalesce(a.risk_band, 'unknown') AS risk_band,
    a.inclusion_prob,
    CASE WHEN a.answer_id IS NOT NULL THEN u.y END AS y,
    CASE WHEN a.answer_id IS NULL THEN 'answer_not_on_date' ELSE u.category END AS category
FROM query_table(judged) AS u
LEFT JOIN answers AS a ON a.answer_id = u.answer_id
