-- Purpose: one batch of the date's citations to align: the answers from $first to $last
-- (inclusive, in answer_id order), or the citations without an answer_id when $nulls. The
-- alignment SQL reads this table as `cites`, so a batch aligns exactly as the whole day does.
-- Grain: one row per citation. Input: all_cites (select_citation_refs); $first, $last, $nulls.
SELECT *
FROM all_cites
WHERE CASE WHEN $nulls THEN answer_id IS NULL ELSE answer_id BETWEEN $first AND $last END
ORDER BY answer_id, claim_id, citation_id
