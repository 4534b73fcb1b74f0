-- Purpose: units of tokens per served answer (the fail-closed verification rule,
-- docs/references.md: only verified, served answers count);
-- y = input + output tokens; a served answer with no recorded cost is unresolved, never 0.
-- Grain: one row per served answer. Inputs: answer_checks, answers (strata).
SELECT
    'cost_per_served_answer' AS metric,
    k.answer_id AS unit_id,
    a.answer_id,
    a.query_id,
    a.engine,
    a.domain,
    a.risk_band,
    a.inclusion_prob,
    (k.input_tokens + k.output_tokens)::DOUBLE AS y,
    CASE
        WHEN k.input_tokens IS NULL OR k.output_tokens IS NULL THEN 'no_cost_recorded'
        ELSE 'served'
    END AS category
FROM answer_checks AS k
JOIN answers AS a USING (answer_id)
WHERE k.served
