-- Purpose: the reference time of every citation of one observation date, the time the crawl
-- plan compares captures against: when the engine says it retrieved the page, else when the
-- answer was observed.
-- Grain: one row per citation (a URL cited twice gives two rows; the caller keys the distinct
-- URLs). Inputs: citations (answer_id, url, retrieved_at), answers (answer_id, observed_at).
SELECT c.url, coalesce(c.retrieved_at, a.observed_at::TIMESTAMPTZ) AS reference_time
FROM citations AS c
LEFT JOIN answers AS a USING (answer_id)
