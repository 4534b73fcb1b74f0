-- Purpose: the citations the report lists as findings: with $which = 'l1' every L1 verdict
-- but pass (dead, changed, unresolved); with $which = 'evidence' every citation that passed L1
-- but whose archived page the evidence locator flags (a hard mismatch, no evidence, weak
-- evidence). Each with the cited URL and
-- title as the engine gave them (untrusted text); the L1 verdict and reason; the archived
-- reference the verdict rests on (capture time, the URI its redirect chain ended at, its HTTP
-- status and payload digest, its replay link); and the evidence locator's signal on the
-- claim's worst atom (lowest evidence score): the atom, the best passage of the page and the
-- mismatched terms (a grader signal, never gold).
-- Grain: one row per citation (at most $limit), with the total count. Inputs:
-- citation_existence, citations, answers (engine), support_evidence (may be empty).
WITH worst_atom AS (
    SELECT
        citation_id,
        arg_min(verdict, (coalesce(evidence_score, 9), atom_index)) AS evidence_verdict,
        arg_min(atom_text, (coalesce(evidence_score, 9), atom_index)) AS atom_text,
        arg_min(passage_text, (coalesce(evidence_score, 9), atom_index)) AS passage_text,
        arg_min(mismatch_terms, (coalesce(evidence_score, 9), atom_index)) AS mismatch_terms,
        arg_min(reason, (coalesce(evidence_score, 9), atom_index)) AS evidence_reason
    FROM support_evidence
    GROUP BY citation_id
)
SELECT
    a.engine,
    c.citation_id,
    c.url,
    c.title,
    e.verdict,
    e.reason,
    e.capture_time,
    e.final_uri,
    e.final_status,
    e.payload_sha256,
    e.replay_url,
    w.evidence_verdict,
    w.evidence_reason,
    w.atom_text,
    w.passage_text,
    w.mismatch_terms,
    count(*) OVER () AS n_total
FROM citation_existence AS e
JOIN citations AS c ON c.citation_id = e.citation_id
LEFT JOIN answers AS a ON a.answer_id = c.answer_id
LEFT JOIN worst_atom AS w ON w.citation_id = c.citation_id
WHERE CASE $which
    WHEN 'l1' THEN e.verdict IS DISTINCT FROM 'pass'
    ELSE e.verdict = 'pass'
        AND w.evidence_verdict IN ('mismatch_flagged', 'no_evidence_in_page', 'weak_evidence')
END
ORDER BY
    CASE e.verdict WHEN 'dead' THEN 0 WHEN 'changed' THEN 1 WHEN 'pass' THEN 3 ELSE 2 END,
    CASE w.evidence_verdict WHEN 'mismatch_flagged' THEN 0 WHEN 'no_evidence_in_page' THEN 1
        ELSE 2 END,
    c.citation_id
LIMIT $limit
