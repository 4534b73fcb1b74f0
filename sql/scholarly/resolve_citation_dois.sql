-- Purpose: each selected citation with its DOI: the `doi` field when it normalizes (doi_map),
-- else one found in its URL (url_map); where it came from, and why a DOI field was refused.
-- Grain: one row per citation_id. Inputs: cites (select_scholarly_citations), doi_map
-- (doi_field, doi), url_map (url, doi): DOI normalization done once per distinct value.
SELECT
    c.answer_id,
    c.claim_id,
    c.citation_id,
    c.claim_index,
    c.citation_index,
    coalesce(f.doi, u.doi) AS doi,
    CASE WHEN f.doi IS NOT NULL THEN 'field' WHEN u.doi IS NOT NULL THEN 'url' ELSE 'none' END
        AS doi_source,
    CASE WHEN nullif(trim(c.doi), '') IS NOT NULL AND f.doi IS NULL
        THEN 'doi_field_not_a_doi' END AS doi_note,
    nullif(trim(c.title), '') AS title,
    c.authors,
    c.year,
    nullif(trim(c.venue), '') AS venue
FROM cites AS c
LEFT JOIN doi_map AS f ON f.doi_field = c.doi
LEFT JOIN url_map AS u ON u.url = c.url
ORDER BY c.answer_id, c.claim_index, c.citation_index
