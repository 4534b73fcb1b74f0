-- Purpose: BM25 of every passage window of a cited page against each atom (Okapi BM25, the
-- page's windows as the collection: idf = ln(1 + (N - df + 0.5) / (df + 0.5)), $k1, $b), and
-- the share of the atom's terms each window contains; the $top_k windows per (atom, page) by
-- BM25 (ties: earlier window first), with how many of the atom's terms the page has anywhere.
-- Grain: one row per (claim_id, atom_index, payload_sha256, rank), rank 1..$top_k.
-- Inputs: pairs (claim_id, payload_sha256), atom_terms, passage_terms.
WITH needs AS (
    SELECT DISTINCT p.payload_sha256, a.claim_id, a.atom_index, a.term
    FROM pairs AS p JOIN atom_terms AS a USING (claim_id)
    WHERE p.payload_sha256 IS NOT NULL
),
pages AS (
    SELECT payload_sha256, count(DISTINCT passage_no) AS n_passages,
        avg(dl) AS avgdl
    FROM (SELECT DISTINCT payload_sha256, passage_no, dl FROM passage_terms
          WHERE payload_sha256 IN (SELECT payload_sha256 FROM needs))
    GROUP BY ALL
),
wanted AS (
    SELECT DISTINCT payload_sha256, term FROM needs
),
df AS (
    SELECT payload_sha256, term, count(*) AS df
    FROM passage_terms
    SEMI JOIN wanted USING (payload_sha256, term)
    GROUP BY ALL
),
hits AS (
    SELECT n.claim_id, n.atom_index, n.payload_sha256, t.passage_no, n.term,
        ln(1 + (g.n_passages - df.df + 0.5) / (df.df + 0.5))
            * t.tf * ($k1 + 1) / (t.tf + $k1 * (1 - $b + $b * t.dl / g.avgdl)) AS w
    FROM needs AS n
    JOIN passage_terms AS t USING (payload_sha256, term)
    JOIN df USING (payload_sha256, term)
    JOIN pages AS g USING (payload_sha256)
),
page_terms AS (
    -- a needed term the page has anywhere has a df row (needs is distinct per term)
    SELECT claim_id, atom_index, payload_sha256, count(*)::INTEGER AS page_matched
    FROM needs JOIN df USING (payload_sha256, term)
    GROUP BY ALL
),
scored AS (
    -- hits holds each term once per (atom, page, passage): no DISTINCT needed
    SELECT claim_id, atom_index, payload_sha256, passage_no, sum(w ORDER BY term) AS bm25,
        list(term ORDER BY term) AS matched_terms
    FROM hits GROUP BY ALL
),
ranked AS (
    SELECT *, row_number() OVER (PARTITION BY claim_id, atom_index, payload_sha256
                                 ORDER BY bm25 DESC, passage_no) AS rank
    FROM scored
)
SELECT r.claim_id, r.atom_index, r.payload_sha256, r.rank::INTEGER AS rank, r.passage_no,
    r.bm25, r.matched_terms, p.page_matched
FROM ranked AS r JOIN page_terms AS p USING (claim_id, atom_index, payload_sha256)
WHERE r.rank <= $top_k
