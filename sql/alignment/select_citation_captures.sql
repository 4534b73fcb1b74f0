-- Purpose: the `citation_captures` table: each citation tied to the capture nearest its
-- reference time inside the window (hop 0), the redirect chain followed to its final capture,
-- a revisit resolved to the payload it refers to (same-URI or URI-agnostic WARC-Refers-To,
-- else by payload digest), whether a later capture in the window has other content, and the
-- reason when no usable final payload exists. Grain: one row per citation.
-- Inputs: cites, hops, caps, origs; $max_hops.
WITH first_hop AS (
    SELECT * FROM hops WHERE hop = 0
),
last_hop AS (
    SELECT * FROM hops
    QUALIFY row_number() OVER (PARTITION BY citation_id ORDER BY hop DESC) = 1
),
revisits AS (
    SELECT l.citation_id, l.key, l.capture_time, l.cdx_digest,
        coalesce(l.refers_to_uri, l.target_uri) AS ref_uri,
        coalesce(
            try_strptime(l.refers_to_date, '%Y-%m-%dT%H:%M:%SZ'),
            try_strptime(l.refers_to_date, '%Y-%m-%dT%H:%M:%S.%fZ'),
            try_strptime(l.refers_to_date, '%Y%m%d%H%M%S')
        )::TIMESTAMPTZ AS ref_time
    FROM last_hop AS l
    WHERE l.record_type = 'revisit'
),
candidates AS (
    SELECT v.citation_id, o.*, 0 AS rank_how, (o.ckey = v.key) AS same_key
    FROM revisits AS v
    JOIN origs AS o ON o.target_uri = v.ref_uri AND o.capture_time = v.ref_time
    WHERE v.cdx_digest IS NULL OR o.cdx_digest IS NULL OR o.cdx_digest = v.cdx_digest
    UNION ALL
    SELECT v.citation_id, o.*, 1 AS rank_how, (o.ckey = v.key) AS same_key
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
        ORDER BY rank_how, same_key DESC, (problem IS NULL) DESC, capture_time DESC,
            file DESC, "offset" DESC) = 1
),
later AS (
    SELECT l.citation_id, min(c.capture_time) AS later_capture_time
    FROM last_hop AS l
    JOIN cites AS ci USING (citation_id)
    JOIN caps AS c ON c.kh = hash(l.key) AND c.ckey = l.key
        AND c.capture_time > l.capture_time
    WHERE c.capture_time <= ci.window_end AND c.problem IS NULL
        AND c.http_status BETWEEN 200 AND 299 AND l.http_status BETWEEN 200 AND 299
        AND c.cdx_digest IS DISTINCT FROM l.cdx_digest
    GROUP BY l.citation_id
),
invalid_dates AS (
    SELECT DISTINCT ckey FROM caps WHERE capture_time IS NULL
)
SELECT
    ci.answer_id, ci.claim_id, ci.citation_id, ci.url, ci.canonical_url, ci.canonical_key,
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
    lt.later_capture_time IS NOT NULL AS later_content_differs,
    l.visited AS chain_keys,
    CASE
        WHEN ci.url_error IS NOT NULL THEN ci.url_error
        WHEN ci.reference_time IS NULL THEN 'no_reference_time'
        WHEN f.cap_id IS NULL AND ci.canonical_key IN (SELECT ckey FROM invalid_dates)
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
ORDER BY ci.answer_id, ci.claim_id, ci.citation_id
