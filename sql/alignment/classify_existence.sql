-- Purpose: L1 existence verdict (docs/architecture.md, the alignment stage): pass (final 2xx,
-- content unchanged), dead (final 4xx/5xx, a recorded redirect loop, or a 2xx that strong
-- evidence shows is a "not found" page: reason soft_404, soft_404_evidence says which),
-- changed (final 2xx, but the newest capture after the reference time, whenever taken, has
-- other content or is gone: later_change says which), unresolved (the archive does not settle
-- it; the cause in reason; a wall standing where the page should be — consent_wall,
-- login_wall, paywall, bot_challenge — is unresolved, never pass or dead; the three-layer
-- audit calls this state "unknown"). Unresolved is never pass or dead. A weak soft-404 signal
-- is soft_404_flag, not a verdict. A static capture of a script-rendered page (wall
-- script_shell) is unresolved too: its text is not the page's. capture_fidelity: how the text
-- L2 read was captured (static: a plain HTTP capture; rendered: a browser's DOM, from
-- citation_captures). replay_url: the pywb link of the final capture (NULL unless
-- replay is configured).
-- Grain: one row per citation. Inputs: citation_captures, page_checks (per citation: wall,
-- soft-404 evidence and flag; citeaudit/alignment/soft404.py).
SELECT
    c.answer_id, c.claim_id, c.citation_id,
    CASE
        WHEN c.resolution_issue = 'redirect_loop' THEN 'dead'
        WHEN c.resolution_issue IS NOT NULL THEN 'unresolved'
        WHEN p.wall IS NOT NULL THEN 'unresolved'
        WHEN c.final_status BETWEEN 400 AND 599 THEN 'dead'
        WHEN c.final_status BETWEEN 200 AND 299 AND p.soft_404_evidence IS NOT NULL THEN 'dead'
        WHEN c.final_status BETWEEN 200 AND 299 AND c.later_content_differs THEN 'changed'
        WHEN c.final_status BETWEEN 200 AND 299 THEN 'pass'
        ELSE 'unresolved'
    END AS verdict,
    CASE
        WHEN c.resolution_issue IS NOT NULL THEN c.resolution_issue
        WHEN p.wall IS NOT NULL THEN p.wall
        WHEN c.final_status BETWEEN 400 AND 599 THEN 'http_' || c.final_status
        WHEN c.final_status BETWEEN 200 AND 299 AND p.soft_404_evidence IS NOT NULL
            THEN 'soft_404'
        WHEN c.final_status BETWEEN 200 AND 299 AND c.later_content_differs THEN c.later_change
        WHEN c.final_status BETWEEN 200 AND 299 THEN 'ok'
        WHEN c.final_status IS NULL THEN 'missing_http_status'
        ELSE 'unexpected_status_' || c.final_status
    END AS reason,
    c.drift_seconds, c.hops, c.final_status, c.final_uri, c.payload_sha256, c.reference_time,
    c.capture_time, c.later_capture_time, c.replay_url,
    CASE WHEN c.resolution_issue IS NULL AND c.final_status BETWEEN 200 AND 299
        THEN p.soft_404_evidence END AS soft_404_evidence,
    p.soft_404_flag,
    c.capture_fidelity
FROM citation_captures AS c
LEFT JOIN page_checks AS p USING (citation_id)
ORDER BY c.answer_id, c.claim_id, c.citation_id
