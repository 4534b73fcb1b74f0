-- Purpose: L3 metadata verdicts of the run for the summary: per codebook and verdict, the
-- citations, how many cite a retracted work, and how many registry disagreements there were.
-- Grain: one row per (codebook, verdict). Input: the catalog view metadata_checks.
SELECT
    codebook,
    verdict,
    count(*) AS citations,
    count(*) FILTER (WHERE retracted) AS retracted,
    count(*) FILTER (WHERE NOT registries_agree) AS registries_disagree
FROM metadata_checks
GROUP BY codebook, verdict
ORDER BY codebook, verdict
