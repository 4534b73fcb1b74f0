-- Purpose: the `citation_captures` table: each citation tied to the capture nearest its
-- reference time inside the window (hop 0), the redirect chain followed to its final capture,
-- a revisit resolved to the payload it refers to (WARC-Refers-To-Target-URI and -Date, also
-- for another URI, else the latest earlier response with its payload digest), whether a later
-- usable 2xx capture in the window has another digest, and the reason when no usable final
-- payload exists. Grain: one row per citation.
-- Inputs: cites, citations (url), hops, details, origs, later,
-- invalid_keys; $max_hops.
WITH first_hop AS (
    SELECT h.*, d.file, d.offset, d.record_type
    FROM hops AS h
    LEFT JOIN details AS d USING (cap_id)
    WHERE h.hop = 0
),
last_hop AS (
    SELECT h.*, d.file, d.offset, d.record_type, d.target_uri, d.cdx_digest, d.payload_sha256,
        d.refers_to_uri, d.refers_to_date
    FROM (
        SELECT h.* FROM hops AS h
        JOIN (SELECT citation_id, max(hop) AS hop FROM hops GROUP BY citation_id)
            USING (citation_id, hop)
    ) AS h
    LEFT JOIN details AS d USING (cap_id)
),
revisits AS (
    SELECT citation_id, key, capture_time, cdx_digest,
        coalesce(refers_to_uri, target_uri) AS ref_uri,
        coalesce(
            try_strptime(refers_to_date, '%Y-%m-%dT%H:%M:%SZ'),
            try_strptime(refers_to_date, '%Y-%m-%dT%H:%M:%S.%fZ'),
            try_strptime(refers_to_date, '%Y%m%d%H%M%S')
        )::TIMESTAMPTZ AS ref_time
    FROM last_hop
    WHERE record_type = 'revisit'
),
candidates AS (
    SELECT v.citation_id, o.*, 0 AS rank_how
    FROM revisits AS v
    JOIN origs AS o ON o.target_uri = v.ref_uri AND o.capture_time = v.ref_time
    WHERE v.cdx_digest IS NULL OR o.cdx_digest IS NULL OR o.cdx_digest = v.cdx_digest
    UNION ALL
    SELECT v.citation_id, o.*, 1 AS rank_how
    FROM revisits AS v
    JOIN origs AS o ON o.cdx_digest = v.cdx_digest
    WHERE o.capture_time <= v.capture_time
),
resolved AS (
    SELECT citation_id, file AS orig_file, "offset" AS orig_offset, capture_time AS orig_time,
        http_status AS orig_status, payload_sha256 AS orig_sha256, problem AS orig_problem,
        CASE rank_how WHEN 0 THEN 'refers_to' ELSE 'payload_digest' END AS revisit_match
    FROM candidates
    QUALIFY row_number() OVER (
        PARTITION BY citation_id
        ORDER BY rank_how, (problem IS NULL) DESC, capture_time DESC, file DESC,
            "offset" DESC) = 1
)
SELECT
    ci.answer_id, ci.claim_id, ci.citation_id, c.url, ci.canonical_key,
    ci.reference_time, ci.reference_source, ci.window_start, ci.window_end,
    f.file, f.offset, f.capture_time, f.record_type,
    date_diff('microsecond', ci.reference_time, f.capture_time) / 1e6 AS drift_seconds,
    coalesce(l.hop, 0)::INTEGER AS hops,
    l.target_uri AS final_uri,
    l.file AS final_file, l.offset AS final_offset, l.capture_time AS final_capture_time,
    l.record_type AS final_record_type,
    coalesce(l.http_status, r.orig_status)::INTEGER AS final_status,
    l.redirect_location AS final_location,
    CASE WHEN l.record_type = 'revisit' THEN r.orig_file ELSE l.file END AS payload_file,
    CASE WHEN l.record_type = 'revisit' THEN r.orig_offset ELSE l.offset END AS payload_offset,
    CASE WHEN l.record_type = 'revisit' THEN r.orig_sha256 ELSE l.payload_sha256 END
        AS payload_sha256,
    l.cdx_digest AS payload_digest,
    r.revisit_match,
    r.orig_time AS revisit_original_time,
    lt.later_capture_time,
    lt.later_status,
    lt.later_change,
    lt.later_change IS NOT NULL AS later_content_differs,
    CASE WHEN l.hop > 0 THEN l.visited END AS chain_keys,
    CASE
        WHEN ci.url_error IS NOT NULL THEN ci.url_error
        WHEN ci.reference_time IS NULL THEN 'no_reference_time'
        WHEN f.cap_id IS NULL AND hash(ci.canonical_key) IN (SELECT kh FROM invalid_keys)
            THEN 'capture_date_invalid'
        WHEN f.cap_id IS NULL THEN 'no_capture_in_window'
        WHEN l.cap_id IS NULL THEN 'redirect_target_not_captured'
        WHEN l.problem IS NOT NULL THEN l.problem
        WHEN l.http_status BETWEEN 300 AND 399 AND l.redirect_location IS NULL
            THEN 'redirect_without_location'
        WHEN l.http_status BETWEEN 300 AND 399 AND l.next_key IS NULL
            THEN 'redirect_location_invalid'
        WHEN l.http_status BETWEEN 300 AND 399 AND list_contains(l.visited, l.next_key)
            THEN 'redirect_loop'
        WHEN l.http_status BETWEEN 300 AND 399 AND l.hop >= $max_hops
            THEN 'too_many_redirects'
        WHEN l.record_type = 'revisit' AND r.orig_file IS NULL THEN 'revisit_unresolved'
        WHEN l.record_type = 'revisit' THEN r.orig_problem
    END AS resolution_issue
FROM cites AS ci
LEFT JOIN first_hop AS f USING (citation_id)
LEFT JOIN last_hop AS l USING (citation_id)
LEFT JOIN resolved AS r USING (citation_id)
LEFT JOIN later AS lt USING (citation_id)
LEFT JOIN citations AS c USING (citation_id)
ORDER BY ci.answer_id, ci.claim_id, ci.citation_id
