-- Purpose: the short summary printed after a run: volumes, rejections, the fail-closed
-- verification verdicts (verified, rejected, unresolved) and cost per served answer (the fail-closed verification rule,
-- docs/references.md: only verified, served answers count as billable queries;
-- the tokens spent on rejected answers are shown beside it, never hidden in it).
-- Grain: one row over every date in the catalog. Inputs: the catalog views.
SELECT
    (SELECT count(*) FROM answers) AS answers,
    (SELECT count(*) FROM claims) AS claims,
    (SELECT count(*) FROM citations) AS citations,
    (SELECT count(*) FROM captures) AS captures,
    (SELECT count(*) FROM captures WHERE error IS NOT NULL OR truncated) AS captures_with_error,
    (SELECT count(*) FROM (SELECT DISTINCT source_file, source_line FROM rejected_inputs)) AS rejected_lines,
    (SELECT count(*) FROM rejected_inputs) AS rejected_defects,
    (SELECT count(*) FILTER (WHERE verdict = 'verified') FROM answer_checks) AS verified_answers,
    (SELECT count(*) FILTER (WHERE verdict = 'rejected') FROM answer_checks) AS rejected_answers,
    (SELECT count(*) FILTER (WHERE verdict = 'unresolved') FROM answer_checks)
        AS unresolved_answers,
    (SELECT count(DISTINCT observation_date) FROM answers) AS dates,
    (SELECT sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0)) FILTER (WHERE served)
        FROM answer_checks)::BIGINT AS tokens_served,
    (SELECT sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0)) FROM answer_checks)::BIGINT
        AS tokens_all,
    (SELECT count(*) FILTER (WHERE served AND input_tokens IS NULL) FROM answer_checks)
        AS served_without_cost
