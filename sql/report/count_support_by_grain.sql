-- Purpose: the run summary's split of adjudicated support items by what they judge: a
-- claim-citation pair (one citation against its claim; full support, precision) or a
-- statement judged as a whole against all its citations (claim-level rows; recall only),
-- with the labels of each, per codebook.
-- Grain: one row per (codebook, level). Input: catalog view support_labels.
SELECT
    codebook,
    CASE level WHEN 'citation' THEN 'claim-citation pairs'
        ELSE 'statements (judged as a whole)' END AS judged,
    count(*) AS items,
    count(*) FILTER (WHERE label = 'fully_supported') AS fully_supported,
    count(*) FILTER (WHERE label = 'partially_supported') AS partially_supported,
    count(*) FILTER (WHERE label = 'unsupported') AS unsupported,
    count(*) FILTER (WHERE label = 'contradicted') AS contradicted,
    count(*) FILTER (WHERE label = 'unresolved') AS unresolved
FROM support_labels
GROUP BY ALL
ORDER BY codebook, judged
