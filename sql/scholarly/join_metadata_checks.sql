-- Purpose: the `metadata_checks` table: every selected citation with the verdict of its
-- (DOI, cited fields) combination. Grain: one row per citation_id, in citation order.
-- Inputs: resolved (resolve_citation_dois), verdicts (one row per distinct combination).
SELECT
    r.answer_id,
    r.claim_id,
    r.citation_id,
    r.doi,
    r.doi_source,
    r.doi_note,
    v.candidate_doi,
    v.verdict,
    v.reason,
    v.detail,
    v.mismatch_fields,
    v.fields_compared,
    v.retracted,
    v.retraction_status,
    v.expression_of_concern,
    v.retraction_notice,
    v.crossref_verdict,
    v.openalex_verdict,
    v.registries_agree,
    v.title_similarity,
    v.author_similarity,
    v.year_delta,
    v.venue_similarity,
    v.explanation,
    v.answer_age_days
FROM resolved AS r
JOIN verdicts AS v
    ON v.doi IS NOT DISTINCT FROM r.doi
    AND v.title IS NOT DISTINCT FROM r.title
    AND v.authors IS NOT DISTINCT FROM r.authors
    AND v.year IS NOT DISTINCT FROM r.year
    AND v.venue IS NOT DISTINCT FROM r.venue
ORDER BY r.answer_id, r.claim_index, r.citation_index
