-- Purpose: units of the fail-closed rejection rate (the fail-closed verification rule,
-- docs/references.md#fail-closed-verification): every accepted answer; 1 when the citation
-- checks rejected it (verdict rejected: it is never served), 0 when verified, unresolved (y
-- NULL, category worthiness_unknown) when the rule does not settle it: an uncited sentence of
-- unknown worthiness in an answer that declares no context. The category is the first failing
-- (or unresolved) claim's reason.
-- Grain: one row per answer_id. Inputs: answer_checks, answers (strata).
SELECT
    'fail_closed_rejection_rate' AS metric,
    k.answer_id AS unit_id,
    a.answer_id,
    a.query_id,
    a.engine,
    a.domain,
    a.risk_band,
    a.inclusion_prob,
    CASE k.verdict WHEN 'verified' THEN 0.0 WHEN 'rejected' THEN 1.0 END AS y,
    CASE WHEN k.verdict = 'verified' THEN 'verified' ELSE coalesce(k.reason, 'rejected') END
        AS category
FROM answer_checks AS k
JOIN answers AS a USING (answer_id)
