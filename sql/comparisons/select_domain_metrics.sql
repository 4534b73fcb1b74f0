-- Purpose: the cited_domains table before its intervals: per engine (and 'all' engines) and
-- cited domain, the citations, answers and queries citing it, and for dead, changed and
-- unsupported the resolved units, the units counted 1, the unresolved beside, and Kish's
-- effective size over queries (sum m_g)^2 / sum m_g^2 (m_g: a query's resolved units), since
-- the citations of one query move together; plus the sources the engine retrieved on that
-- domain but no claim cited (retrieved_units: one row per retrieved URL of an answer).
-- Grain: one row per (engine, cited_domain), engine 'all' pooling the engines (a query's
-- answers by every engine one cluster). Inputs: domain_units (select_domain_units.sql),
-- retrieved_units (answer_id, engine, query_id, cited_domain).
WITH per_query AS (
    SELECT
        CASE WHEN grouping(engine) = 1 THEN 'all' ELSE engine END AS engine,
        cited_domain,
        query_id,
        count(*) AS citations,
        count(DISTINCT answer_id) AS answers,
        count(dead) AS dead_n,
        sum(dead) AS dead_k,
        sum(changed) AS changed_k,
        count(unsupported) AS unsupported_n,
        sum(unsupported) AS unsupported_k
    FROM domain_units
    GROUP BY GROUPING SETS ((engine, cited_domain, query_id), (cited_domain, query_id))
),
cited AS (
    SELECT
        engine,
        cited_domain,
        sum(citations)::BIGINT AS citations,
        sum(answers)::BIGINT AS answers,
        count(*)::BIGINT AS queries,
        sum(dead_n)::BIGINT AS existence_resolved,
        (sum(citations) - sum(dead_n))::BIGINT AS existence_unresolved,
        coalesce(sum(dead_k), 0)::BIGINT AS dead,
        coalesce(sum(changed_k), 0)::BIGINT AS changed,
        CASE WHEN sum(dead_n) > 0
            THEN sum(dead_n)::DOUBLE ^ 2 / sum(dead_n::DOUBLE ^ 2) END AS existence_kish,
        sum(unsupported_n)::BIGINT AS support_resolved,
        (sum(citations) - sum(unsupported_n))::BIGINT AS support_unresolved,
        coalesce(sum(unsupported_k), 0)::BIGINT AS unsupported,
        CASE WHEN sum(unsupported_n) > 0
            THEN sum(unsupported_n)::DOUBLE ^ 2 / sum(unsupported_n::DOUBLE ^ 2) END
            AS support_kish
    FROM per_query
    GROUP BY engine, cited_domain
),
retrieved AS (
    SELECT
        CASE WHEN grouping(engine) = 1 THEN 'all' ELSE engine END AS engine,
        cited_domain,
        count(*)::BIGINT AS retrieved_not_cited
    FROM retrieved_units
    GROUP BY GROUPING SETS ((engine, cited_domain), (cited_domain))
)
SELECT
    engine,
    cited_domain,
    coalesce(c.citations, 0) AS citations,
    coalesce(c.answers, 0) AS answers,
    coalesce(c.queries, 0) AS queries,
    coalesce(c.existence_resolved, 0) AS existence_resolved,
    coalesce(c.existence_unresolved, 0) AS existence_unresolved,
    coalesce(c.dead, 0) AS dead,
    coalesce(c.changed, 0) AS changed,
    c.existence_kish,
    coalesce(c.support_resolved, 0) AS support_resolved,
    coalesce(c.support_unresolved, 0) AS support_unresolved,
    coalesce(c.unsupported, 0) AS unsupported,
    c.support_kish,
    coalesce(r.retrieved_not_cited, 0) AS retrieved_not_cited
FROM cited AS c
FULL OUTER JOIN retrieved AS r USING (engine, cited_domain)
ORDER BY engine, citations DESC, cited_domain
