-- Purpose: the data contract of one ingested date, as counts an asset check can judge:
-- ids unique, no claim without its answer, no citation without its claim, share of lines rejected.
-- Grain: one row. Inputs: answers, claims, citations, rejected_inputs (one observation date).
SELECT
    (SELECT count(*) - count(DISTINCT answer_id) FROM answers) AS duplicate_answer_ids,
    (SELECT count(*) - count(DISTINCT claim_id) FROM claims) AS duplicate_claim_ids,
    (SELECT count(*) - count(DISTINCT citation_id) FROM citations) AS duplicate_citation_ids,
    (SELECT count(*) FROM claims ANTI JOIN answers USING (answer_id)) AS orphan_claims,
    (SELECT count(*) FROM citations ANTI JOIN claims USING (answer_id, claim_id)) AS orphan_citations,
    (SELECT count(*) FROM (SELECT DISTINCT source_file, source_line FROM rejected_inputs))
        AS rejected_lines,
    (SELECT count(*) FROM answers) AS accepted_lines
