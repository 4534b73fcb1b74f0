-- Purpose: the distinct (DOI, cited fields) combinations: each is looked up and compared once.
-- Grain: one row per distinct (doi, title, authors, year, venue). Input: resolved.
SELECT DISTINCT doi, title, authors, year, venue
FROM resolved
ORDER BY doi NULLS LAST, title NULLS LAST, year NULLS LAST, venue NULLS LAST,
    authors::VARCHAR NULLS LAST
