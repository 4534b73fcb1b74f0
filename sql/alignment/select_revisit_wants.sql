-- Purpose: what the final revisits of the alignment refer to: their payload digest and their
-- WARC-Refers-To-Target-URI (else their own URI). Grain: one row per distinct pair.
-- Inputs: hops, details.
SELECT DISTINCT d.cdx_digest AS digest, coalesce(d.refers_to_uri, d.target_uri) AS uri
FROM hops AS h
JOIN details AS d USING (cap_id)
WHERE d.record_type = 'revisit'
