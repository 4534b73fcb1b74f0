-- Purpose: units of the L1 existence rate: every citation of the date, with its existence
-- verdict; pass = 1, dead or changed = 0, unresolved (or no existence row at all) =
-- unresolved.
-- A soft-404 is dead (counted as dead, category dead_soft_404); a wall is unresolved
-- (category unresolved_<wall>, a script shell unresolved_script_shell). A pass whose text
-- came from a browser's rendered DOM (capture_fidelity 'rendered') is category pass_rendered:
-- it counts 1 like any pass; the breakdown shows rendered and static passes apart.
-- Grain: one row per citation_id. Inputs: citations, citation_existence, answers (strata).
SELECT
    'existence_rate' AS metric,
    c.citation_id AS unit_id,
    a.answer_id,
    a.query_id,
    a.engine,
    a.domain,
    a.risk_band,
    a.inclusion_prob,
    CASE e.verdict WHEN 'pass' THEN 1.0 WHEN 'dead' THEN 0.0 WHEN 'changed' THEN 0.0 END AS y,
    -- soft-404s (dead on strong evidence) and walls (unresolved) are named in the breakdown
    CASE
        WHEN e.verdict = 'dead' AND e.reason = 'soft_404' THEN 'dead_soft_404'
        WHEN e.verdict = 'unresolved'
            AND e.reason IN ('consent_wall', 'login_wall', 'paywall', 'bot_challenge',
                             'script_shell')
            THEN 'unresolved_' || e.reason
        -- a pass read from a browser's rendered DOM: named apart, counted as any pass
        WHEN e.verdict = 'pass' AND e.capture_fidelity = 'rendered' THEN 'pass_rendered'
        ELSE coalesce(e.verdict, 'no_existence_row')
    END AS category
FROM citations AS c
JOIN answers AS a USING (answer_id)
LEFT JOIN citation_existence AS e USING (citation_id)
