-- Purpose: units of the L1 dead rate: citations with a resolved existence verdict; dead = 1,
-- the other resolved verdicts (pass, changed) = 0; unresolved or no existence row =
-- unresolved, beside.
-- A soft-404 is dead (counted as dead, category dead_soft_404); a wall is unresolved
-- (category unresolved_<wall>). A pass whose text came from a browser's rendered DOM
-- (capture_fidelity 'rendered') is category pass_rendered, y as any pass.
-- Grain: one row per citation_id. Inputs: citations, citation_existence, answers (strata).
SELECT
    'dead_rate' AS metric,
    c.citation_id AS unit_id,
    a.answer_id,
    a.query_id,
    a.engine,
    a.domain,
    a.risk_band,
    a.inclusion_prob,
    CASE WHEN e.verdict IN ('pass', 'dead', 'changed') THEN (e.verdict = 'dead')::DOUBLE END
        AS y,
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
