-- Purpose: the run summary's split of adjudicated support items by what they judge: a
-- claim-citation pair (one citation against its claim; full support, precision) or a
-- statement judged as a whole against all its citations (claim-grain rows; recall only),
-- with the verdicts of each, per codebook.
-- Grain: one row per (codebook, grain). Input: catalog view support_labels.
SELECT
    codebook,
    CASE grain WHEN 'citation' THEN 'claim-citation pairs'
        ELSE 'statements (judged as a whole)' END AS judged,
    count(*) AS items,
    count(*) FILTER (WHERE verdict = 'fully_supported') AS fully_supported,
    count(*) FILTER (WHERE verdict = 'partially_supported') AS partially_supported,
    count(*) FILTER (WHERE verdict = 'unsupported') AS unsupported,
    count(*) FILTER (WHERE verdict = 'contradicted') AS contradicted,
    count(*) FILTER (WHERE verdict = 'unresolved') AS unresolved
FROM support_labels
GROUP BY ALL
ORDER BY codebook, judged
