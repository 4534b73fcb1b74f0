-- Purpose: the citations the report lists under L1 findings: every verdict but pass (dead,
-- changed, unresolved), with the cited URL and title as the engine gave them (untrusted text),
-- and the archived reference the verdict rests on: the capture time of the aligned capture,
-- the URI its redirect chain ended at, its HTTP status and payload digest, its replay link.
-- Grain: one row per citation (at most $limit), with the total count. Inputs:
-- citation_existence, citations, answers (engine).
SELECT
    a.engine,
    c.citation_id,
    c.url,
    c.title,
    e.verdict,
    e.reason,
    e.capture_time,
    e.final_uri,
    e.final_status,
    e.payload_sha256,
    e.replay_url,
    count(*) OVER () AS n_total
FROM citation_existence AS e
JOIN citations AS c ON c.citation_id = e.citation_id
LEFT JOIN answers AS a ON a.answer_id = c.answer_id
WHERE e.verdict IS DISTINCT FROM 'pass'
ORDER BY CASE e.verdict WHEN 'dead' THEN 0 WHEN 'changed' THEN 1 ELSE 2 END, c.citation_id
LIMIT $limit
