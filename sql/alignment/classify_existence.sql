-- Purpose: L1 existence verdict (docs/architecture.md, the alignment stage): pass (final 2xx,
-- content unchanged), dead (final 4xx/5xx or a recorded redirect loop), changed (final 2xx, but
-- the newest capture after the reference time, whenever taken, has other content or is gone:
-- later_change says which), unresolved (the archive does not settle it; the cause in reason;
-- the three-layer audit calls this state "unknown"). Unresolved is never pass or dead.
-- replay_url: the pywb link of the final capture (NULL unless replay is configured).
-- Grain: one row per citation. Input: citation_captures.
SELECT
    answer_id, claim_id, citation_id,
    CASE
        WHEN resolution_issue = 'redirect_loop' THEN 'dead'
        WHEN resolution_issue IS NOT NULL THEN 'unresolved'
        WHEN final_status BETWEEN 400 AND 599 THEN 'dead'
        WHEN final_status BETWEEN 200 AND 299 AND later_content_differs THEN 'changed'
        WHEN final_status BETWEEN 200 AND 299 THEN 'pass'
        ELSE 'unresolved'
    END AS verdict,
    CASE
        WHEN resolution_issue IS NOT NULL THEN resolution_issue
        WHEN final_status BETWEEN 400 AND 599 THEN 'http_' || final_status
        WHEN final_status BETWEEN 200 AND 299 AND later_content_differs THEN later_change
        WHEN final_status BETWEEN 200 AND 299 THEN 'ok'
        WHEN final_status IS NULL THEN 'missing_http_status'
        ELSE 'unexpected_status_' || final_status
    END AS reason,
    drift_seconds, hops, final_status, final_uri, payload_sha256, reference_time,
    capture_time, later_capture_time, replay_url
FROM citation_captures
ORDER BY answer_id, claim_id, citation_id
