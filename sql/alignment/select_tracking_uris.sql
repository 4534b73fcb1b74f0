-- Purpose: the distinct capture target URIs whose query carries a tracking parameter, so only
-- they are re-keyed in Python (for every other URI the index's SURT urlkey is already the
-- canonical key). Grain: one row per distinct target_uri. Input: caps_raw. $tracking_re is
-- the codebook's tracking globs as one RE2 pattern over the query string.
SELECT DISTINCT target_uri
FROM caps_raw
WHERE target_uri LIKE '%?%'
    AND regexp_matches(regexp_extract(target_uri, '\?([^#]*)', 1), $tracking_re)
ORDER BY target_uri
