-- Purpose: the citations the L3 metadata check looks at: those with a DOI field, a DOI-looking
-- URL, a scholarly source type or bibliographic fields (title with authors, year or venue).
-- Grain: one row per citation_id. Input: citations (one observation date).
SELECT
    answer_id,
    claim_id,
    citation_id,
    claim_index,
    citation_index,
    url,
    doi,
    title,
    authors,
    year,
    venue
FROM citations
WHERE doi IS NOT NULL
    OR regexp_matches(coalesce(url, ''), '10\.\d{4,9}(/|%2F|%2f)')
    OR source_type = 'scholarly'
    OR (title IS NOT NULL AND (authors IS NOT NULL OR year IS NOT NULL OR venue IS NOT NULL))
ORDER BY answer_id, claim_index, citation_index
