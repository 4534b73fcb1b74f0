-- Purpose: the distinct content terms of each atom (the words the page must say).
-- Grain: one row per (claim_id, atom_index, term). Input: atoms (match_text); $stopwords.
SELECT DISTINCT claim_id, atom_index, unnest(evidence_terms(match_text, $stopwords)) AS term
FROM atoms
