-- Purpose: the wide columns of the capture records some citation landed on (any hop), read
-- once from the captures parquet. Grain: one row per landed record (cap_id).
-- Inputs: caps_raw, files, hops.
SELECT
    (f.file_rank << 40) + r.offset AS cap_id,
    r.file, r.offset, r.record_type, r.target_uri, r.cdx_digest, r.payload_sha256,
    r.refers_to_uri, r.refers_to_date
FROM caps_raw AS r
JOIN files AS f USING (file)
WHERE (f.file_rank << 40) + r.offset IN (SELECT cap_id FROM hops WHERE cap_id IS NOT NULL)
    AND r.record_type IN ('response', 'revisit')
