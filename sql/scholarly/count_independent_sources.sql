-- Purpose: cross-source independence per claim (the three-layer audit's L3 metadata layer, docs/references.md#three-layer-audit): citations of one claim
-- that share a payload digest or an origin (registrable domain) are one source; connected
-- components of that "same source" relation are counted. A citation with neither key (no URL,
-- no capture) is its own source.
-- Grain: one row per claim. Inputs: claims (claim_id, answer_id, claim_index), cite_keys
-- (claim_id, citation_id, origin, payload_sha256).
WITH RECURSIVE edges AS (
    SELECT a.claim_id, a.citation_id AS src, b.citation_id AS dst
    FROM cite_keys AS a
    JOIN cite_keys AS b
        ON a.claim_id = b.claim_id
        AND (a.citation_id = b.citation_id
            OR a.origin = b.origin
            OR a.payload_sha256 = b.payload_sha256)
),
reach (claim_id, src, dst) AS (
    SELECT claim_id, src, dst FROM edges
    UNION
    SELECT r.claim_id, r.src, e.dst
    FROM reach AS r
    JOIN edges AS e ON r.claim_id = e.claim_id AND r.dst = e.src
),
components AS (
    SELECT claim_id, src, min(dst) AS component FROM reach GROUP BY claim_id, src
),
per_claim AS (
    SELECT
        k.claim_id,
        count(*)::INTEGER AS n_citations,
        count(DISTINCT c.component)::INTEGER AS n_independent_sources,
        count(DISTINCT k.origin)::INTEGER AS n_origins,
        count(DISTINCT k.payload_sha256)::INTEGER AS n_payload_digests,
        count(*) FILTER (WHERE k.payload_sha256 IS NULL)::INTEGER AS n_without_digest
    FROM cite_keys AS k
    JOIN components AS c ON c.claim_id = k.claim_id AND c.src = k.citation_id
    GROUP BY k.claim_id
)
SELECT
    cl.claim_id,
    cl.answer_id,
    coalesce(p.n_citations, 0) AS n_citations,
    coalesce(p.n_independent_sources, 0) AS n_independent_sources,
    coalesce(p.n_origins, 0) AS n_origins,
    coalesce(p.n_payload_digests, 0) AS n_payload_digests,
    coalesce(p.n_without_digest, 0) AS n_citations_without_digest,
    coalesce(p.n_citations, 0) > coalesce(p.n_independent_sources, 0) AS has_shared_source
FROM claims AS cl
LEFT JOIN per_claim AS p ON p.claim_id = cl.claim_id
ORDER BY cl.answer_id, cl.claim_index
