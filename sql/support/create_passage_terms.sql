-- Purpose: the passage term table of the evidence locator: for each passage window of each
-- page, each distinct content term with its frequency and the window's length in terms (BM25's
-- tf and dl). Grain: one row per (payload_sha256, passage_no, term).
-- Input: windows (payload_sha256, passage_no, passage_text); $stopwords.
WITH t AS (
    SELECT payload_sha256, passage_no, unnest(evidence_terms(passage_text, $stopwords)) AS term
    FROM windows
),
dl AS (
    SELECT payload_sha256, passage_no, count(*)::INTEGER AS dl FROM t GROUP BY ALL
)
SELECT payload_sha256, passage_no, term, count(*)::INTEGER AS tf, any_value(dl.dl) AS dl
FROM t JOIN dl USING (payload_sha256, passage_no)
GROUP BY ALL
