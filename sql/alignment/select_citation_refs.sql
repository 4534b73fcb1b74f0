-- Purpose: each citation's canonical key, reference time and alignment window.
-- Grain: one row per citation. Inputs: citations, answers (observed_at), canon (url →
-- canonical_url, canonical_key, url_error). Reference time = retrieved_at, else observed_at.
SELECT
    c.answer_id,
    c.claim_id,
    c.citation_id,
    k.canonical_key,
    CASE WHEN c.url IS NULL OR trim(c.url) = '' THEN 'no_url' ELSE k.url_error END AS url_error,
    coalesce(c.retrieved_at, a.observed_at::TIMESTAMPTZ) AS reference_time,
    CASE
        WHEN c.retrieved_at IS NOT NULL THEN 'retrieved_at'
        WHEN a.observed_at IS NOT NULL THEN 'observed_at'
    END AS reference_source,
    coalesce(c.retrieved_at, a.observed_at::TIMESTAMPTZ)
        - to_microseconds(CAST($before_s * 1e6 AS BIGINT)) AS window_start,
    coalesce(c.retrieved_at, a.observed_at::TIMESTAMPTZ)
        + to_microseconds(CAST($after_s * 1e6 AS BIGINT)) AS window_end
FROM citations AS c
LEFT JOIN answers AS a USING (answer_id)
LEFT JOIN canon AS k ON k.url = c.url
ORDER BY c.answer_id, c.claim_id, c.citation_id
