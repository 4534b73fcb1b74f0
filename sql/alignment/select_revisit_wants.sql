-- Purpose: what the final revisits of the alignment refer to: their payload digest and their
-- WARC-Refers-To-Target-URI (else their own URI). Grain: one row per distinct pair.
-- Input: hops.
SELECT DISTINCT cdx_digest AS digest, coalesce(refers_to_uri, target_uri) AS uri
FROM hops
WHERE record_type = 'revisit'
