-- Purpose: units of the rejected-input-line rate: every accepted answer (0) and every
-- distinct rejected input line (1). Rejected lines have no trustworthy strata, so the rate
-- is reported overall only.
-- Grain: one row per input line. Inputs: answers, rejected_inputs.
SELECT
    'input_rejection_rate' AS metric,
    answer_id AS unit_id,
    answer_id,
    query_id,
    NULL::VARCHAR AS engine,
    NULL::VARCHAR AS domain,
    NULL::VARCHAR AS risk_band,
    NULL::DOUBLE AS inclusion_prob,
    0.0 AS y,
    'accepted' AS category
FROM answers
UNION ALL
SELECT
    'input_rejection_rate',
    r.source_file || ':' || r.source_line,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    1.0,
    'rejected: ' || coalesce(min(r.reason), 'no reason')
FROM rejected_inputs AS r
GROUP BY r.source_file, r.source_line
