-- Purpose: the distinct payloads whose text L2 needs: final 2xx captures whose alignment
-- resolved, one WARC location per payload digest (the first by file, offset); also final
-- 401/403/429/503 ones, read only to tell a wall (a bot challenge, a login wall) from an error.
-- Grain: one row per payload_sha256. Input: aligned (citation_captures).
SELECT payload_sha256,
    arg_min(payload_file, [payload_file, payload_offset::VARCHAR]) AS file,
    arg_min(payload_offset, [payload_file, payload_offset::VARCHAR]) AS "offset"
FROM aligned
WHERE payload_sha256 IS NOT NULL AND resolution_issue IS NULL
    AND (final_status BETWEEN 200 AND 299 OR final_status IN (401, 403, 429, 503))
GROUP BY payload_sha256
ORDER BY payload_sha256
