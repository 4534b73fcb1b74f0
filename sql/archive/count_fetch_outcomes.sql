-- Purpose: the live crawl's outcomes for the run summary: attempts per observation date and
-- outcome (robots.txt requests, soft-404 probes and web archive lookups counted apart), with
-- the bytes archived.
-- Grain: one row per observation date × purpose kind × outcome. Input: the fetch_log view.
SELECT
    observation_date,
    CASE WHEN purpose = 'robots' THEN 'robots.txt'
        WHEN purpose = 'probe' THEN 'probes'
        WHEN starts_with(purpose, 'archive') THEN 'archives' ELSE 'pages' END AS requests,
    outcome,
    count(*) AS n,
    coalesce(sum(bytes), 0)::BIGINT AS bytes
FROM fetch_log
GROUP BY ALL
ORDER BY observation_date, requests, outcome
