-- Purpose: the `evidence_terms(s, stop)` macro: the content terms of a text for the evidence
-- locator — lower-cased letter/digit runs, stopwords (the list `stop`) and one-letter runs
-- dropped, a light suffix strip (-ing, -ed, -es, -s on words of five or more letters) so
-- "supports" meets "support". The same macro tokenizes atoms and passages.
-- Grain: a scalar macro (one list of terms per text).
CREATE OR REPLACE TEMP MACRO evidence_terms(s, stop) AS
    list_transform(
        list_filter(regexp_extract_all(lower(s), '[\p{L}\p{N}]+'),
                    lambda t: length(t) > 1 AND NOT list_contains(stop, t)),
        lambda t: CASE WHEN length(t) > 4 AND NOT regexp_matches(t, '^[0-9]+$')
            THEN regexp_replace(t, '(ing|ed|es|s)$', '') ELSE t END)
