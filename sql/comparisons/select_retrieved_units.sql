-- Purpose: the sources the engines retrieved but no claim of the answer cites, one row per
-- (answer, retrieved URL), with the answer's engine and query and the URL's domain: what the
-- per-domain view counts as retrieved_not_cited.
-- Grain: one row per URL of answers.retrieved_not_cited that has a domain. Inputs: answers,
-- url_domains.
WITH retrieved AS (
    SELECT answer_id, engine, query_id, unnest(retrieved_not_cited) AS url
    FROM answers
)
SELECT r.answer_id, r.engine, r.query_id, d.cited_domain
FROM retrieved AS r
JOIN url_domains AS d ON d.url = r.url
