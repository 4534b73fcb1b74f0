-- Purpose: per (answer, cited URL): the URL's rank in the answer (first citation position,
-- 1-based) and, when the alignment table exists, the aligned capture's payload digest and
-- time. Grain: one row per (answer_id, source_url). Inputs: sr_citation_rows (citations table:
-- answer_id, claim_index, citation_index, citation_id, url), sr_capture_rows (citation_captures:
-- citation_id, canonical_key, capture_time, payload_sha256; empty when not built).
WITH ranked AS (
    SELECT
        c.answer_id,
        c.url AS source_url,
        c.citation_id,
        row_number() OVER (PARTITION BY c.answer_id
                           ORDER BY c.claim_index, c.citation_index) AS position
    FROM sr_citation_rows AS c
    WHERE c.url IS NOT NULL
),
first_cite AS (
    SELECT answer_id, source_url, min(position) AS rank, arg_min(citation_id, position) AS citation_id
    FROM ranked
    GROUP BY answer_id, source_url
)
SELECT
    f.answer_id,
    f.source_url,
    k.canonical_key AS canonical_url,
    f.rank::INTEGER AS rank,
    k.payload_sha256,
    strftime(k.capture_time AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ') AS capture_time
FROM first_cite AS f
LEFT JOIN sr_capture_rows AS k ON k.citation_id = f.citation_id
ORDER BY f.answer_id, f.source_url
