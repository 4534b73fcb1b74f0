-- Purpose: the (claim, citation) pairs the evidence locator looks at: every citation of every
-- claim, its aligned capture, and the page text's payload digest when a readable 2xx capture
-- with text exists; otherwise the reason the page is unavailable (never a negative finding).
-- Grain: one row per citation. Inputs: claims, citations, aligned (citation_captures), texts
-- (payload_texts), answers (engine, strata).
SELECT c.answer_id, c.claim_id, c.citation_id, c.url,
    a.final_capture_time AS capture_time,
    CASE WHEN t.text IS NOT NULL AND length(t.text) > 0 THEN a.payload_sha256 END
        AS payload_sha256,
    CASE
        WHEN t.text IS NOT NULL AND length(t.text) > 0 THEN NULL
        WHEN a.citation_id IS NULL THEN 'not_aligned'
        WHEN a.resolution_issue IS NOT NULL THEN a.resolution_issue
        WHEN a.payload_sha256 IS NULL THEN 'no_payload'
        WHEN a.final_status NOT BETWEEN 200 AND 299 THEN 'http_' || a.final_status
        -- the extraction error's code, without its free-text tail (`undecodable_body: ...`)
        ELSE coalesce(split_part(t.error, ':', 1), 'no_text')
    END AS unavailable_reason,
    an.engine, an.domain
FROM citations AS c
JOIN claims AS cl USING (claim_id)
JOIN answers AS an ON an.answer_id = c.answer_id
LEFT JOIN aligned AS a USING (citation_id)
LEFT JOIN texts AS t
    ON t.payload_sha256 = a.payload_sha256 AND a.resolution_issue IS NULL
    AND a.final_status BETWEEN 200 AND 299
ORDER BY c.claim_id, c.citation_id
