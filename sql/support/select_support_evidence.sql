-- Purpose: the `support_evidence` table: for each cited (claim, citation) pair and each atom
-- of the claim, the best passage of the archived page (BM25 rank 1, offsets in the page text),
-- the share of the atom's content terms it contains (coverage) and the page contains
-- (page_coverage), the hard-mismatch flags (numbers, percentages, dates, currency amounts,
-- quoted strings, capitalized names of the atom that none of the top passages contains; a
-- negation in the atom or the best passage only, counted only when that passage otherwise
-- covers the atom, since a negation in an unrelated passage says nothing) and the locator's
-- verdict. A page without readable text is `unresolved` (its cause in reason), never a
-- negative finding. Grader rows, never gold.
-- Grain: one row per (claim_id, citation_id, atom_index).
-- Inputs: pairs, atoms, atom_terms, top (score_atom_passages), windows; $located, $no_evidence,
-- $flag_names, $stopwords, $grader, $grader_version.
WITH nterms AS (
    SELECT claim_id, atom_index, count(*)::INTEGER AS n_terms FROM atom_terms GROUP BY ALL
),
ev AS (
    SELECT t.claim_id, t.atom_index, t.payload_sha256,
        string_agg(w.passage_text, ' ' ORDER BY t.rank) AS top_text
    FROM top AS t JOIN windows AS w USING (payload_sha256, passage_no)
    GROUP BY ALL
),
base AS (
    SELECT p.answer_id, p.claim_id, p.citation_id, a.atom_index, a.atom_start, a.atom_end,
        a.atom_text, a.match_text, a.atomization_version, p.url, p.capture_time,
        p.payload_sha256, p.unavailable_reason, p.engine, p.domain,
        coalesce(n.n_terms, 0) AS n_terms,
        b.passage_no, w.passage_start, w.passage_end, w.passage_text, b.bm25, b.matched_terms,
        b.page_matched, ev.top_text,
        ' ' || regexp_replace(ev.top_text, '(\d),(\d{3})', '\1\2', 'g') || ' ' AS top_digits,
        lower(ev.top_text) AS top_lower
    FROM pairs AS p
    JOIN atoms AS a USING (claim_id)
    LEFT JOIN nterms AS n USING (claim_id, atom_index)
    LEFT JOIN top AS b
        ON b.claim_id = p.claim_id AND b.atom_index = a.atom_index
        AND b.payload_sha256 = p.payload_sha256 AND b.rank = 1
    LEFT JOIN windows AS w
        ON w.payload_sha256 = b.payload_sha256 AND w.passage_no = b.passage_no
    LEFT JOIN ev
        ON ev.claim_id = p.claim_id AND ev.atom_index = a.atom_index
        AND ev.payload_sha256 = p.payload_sha256
),
atom_facts AS (
    SELECT *,
        list_transform(
            regexp_extract_all(
                regexp_replace(match_text, '(\d),(\d{3})', '\1\2', 'g'),
                '(?:^|[^\p{L}\p{N}.])((?:[$€£¥]\s?)?\d+(?:\.\d+)?(?:\s?%|\s?percent)?)'
                || '(?:$|[^\p{L}\p{N}])', 1),
            lambda x: {'kind': CASE
                    WHEN regexp_matches(x, '^[$€£¥]') THEN 'currency'
                    WHEN regexp_matches(x, '%|percent') THEN 'percentage'
                    WHEN regexp_matches(x, '^(1[5-9]|20)[0-9][0-9]$') THEN 'date'
                    ELSE 'number' END,
                  'term': regexp_extract(x, '\d+(?:\.\d+)?')}) AS numbers,
        list_transform(regexp_extract_all(match_text, '["“]([^"”]{3,})["”]', 1),
                       lambda x: {'kind': 'quote', 'term': x}) AS quotes,
        list_transform(
            list_filter(regexp_extract_all(match_text, '\s([A-Z][\p{L}\p{N}&-]*[\p{L}\p{N}])', 1),
                        lambda x: $flag_names AND NOT list_contains($stopwords, lower(x))),
            lambda x: {'kind': 'name', 'term': x}) AS names,
        regexp_matches(lower(match_text),
                       '\b(not|no|never|none|neither|nor|without|cannot|nothing)\b|n[''’]t\b')
            AS atom_negated,
        regexp_matches(lower(coalesce(passage_text, '')),
                       '\b(not|no|never|none|neither|nor|without|cannot|nothing)\b|n[''’]t\b')
            AS passage_negated
    FROM base
),
missing AS (
    SELECT *,
        list_distinct(list_filter(numbers, lambda f: NOT regexp_matches(
            top_digits, '[^0-9.]' || replace(f.term, '.', '\.') || '(?:[^0-9.]|\.[^0-9])')))
            AS missing_numbers,
        list_distinct(list_filter(list_concat(quotes, names),
                                  lambda f: strpos(top_lower, lower(f.term)) = 0)) AS missing_words
    FROM atom_facts
    WHERE passage_no IS NOT NULL
),
flagged AS (
    SELECT b.*,
        list_transform(list_concat(m.missing_numbers, m.missing_words),
                       lambda f: f.kind || ':' || f.term) AS mismatch_terms,
        list_sort(list_distinct(list_concat(
            list_transform(list_concat(m.missing_numbers, m.missing_words), lambda f: f.kind),
            CASE WHEN m.atom_negated <> m.passage_negated
                AND len(b.matched_terms) >= $located * b.n_terms THEN ['negation']
                ELSE [] END)))
            AS mismatch_kinds,
        m.atom_negated, m.passage_negated
    FROM base AS b
    LEFT JOIN missing AS m USING (claim_id, citation_id, atom_index)
),
scored AS (
    SELECT *,
        CASE WHEN payload_sha256 IS NOT NULL AND n_terms > 0
            THEN coalesce(len(matched_terms), 0) / n_terms END AS coverage,
        CASE WHEN payload_sha256 IS NOT NULL AND n_terms > 0
            THEN coalesce(page_matched, 0) / n_terms END AS page_coverage
    FROM flagged
)
SELECT answer_id, claim_id, citation_id, atom_index, atom_start, atom_end, atom_text,
    url, capture_time, payload_sha256,
    passage_start, passage_end, passage_text, bm25, n_terms,
    coalesce(matched_terms, []::VARCHAR[]) AS matched_terms,
    coverage, page_coverage,
    coalesce(mismatch_kinds, []::VARCHAR[]) AS mismatch_kinds,
    coalesce(mismatch_terms, []::VARCHAR[]) AS mismatch_terms,
    CASE
        WHEN payload_sha256 IS NULL THEN NULL
        WHEN len(coalesce(mismatch_kinds, [])) > 0 THEN coverage - 1
        ELSE coverage
    END AS evidence_score,
    CASE
        WHEN payload_sha256 IS NULL THEN 'unresolved'
        WHEN n_terms = 0 THEN 'weak_evidence'
        WHEN passage_no IS NULL OR coverage < $no_evidence THEN 'no_evidence_in_page'
        WHEN len(mismatch_kinds) > 0 THEN 'mismatch_flagged'
        WHEN coverage < $located THEN 'weak_evidence'
        ELSE 'evidence_located'
    END AS verdict,
    unavailable_reason AS reason, engine, domain,
    $grader AS grader, $grader_version AS grader_version, atomization_version
FROM scored
ORDER BY claim_id, citation_id, atom_index
