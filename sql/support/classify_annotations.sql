-- Purpose: read every support annotation row under the run's codebook ($version): map its raw
-- label through the codebook's label map, find the observation date and answer of the claim
-- it judges, and give the first reason it cannot be used (NULL when it is accepted).
-- Grain: one row per annotation row (file, line), plus one per file-level defect.
-- Inputs: annotation_rows (support.read_annotations), file_defects, label_map (schema,
-- raw_label, label of codebook $version), known_versions (codebooks/*.yaml stems), annotators
-- (registry; ignored unless $registry_present), all_claims / all_citations (every date).
-- Order of checks (the first failure wins): missing field → invalid timestamp → unknown
-- codebook version → unknown annotator → grader mismatch → unknown schema → unknown label →
-- orphan claim → orphan citation → duplicate judgment. Rows judged under another existing
-- codebook version are read with $version's map: the raw label is the evidence, the codebook
-- decides what it means.
WITH
claim_dates AS (
    SELECT claim_id, arg_min(answer_id, observation_date) AS answer_id,
        min(observation_date) AS observation_date
    FROM all_claims GROUP BY claim_id
),
citation_keys AS (
    SELECT DISTINCT claim_id, citation_id FROM all_citations
),
rows AS (
    SELECT
        r.file, r.line, r.file_date,
        trim(r.claim_id) AS claim_id,
        nullif(trim(r.citation_id), '') AS citation_id,
        nullif(trim(r.atom_id), '') AS atom_id,
        trim(r.annotator_id) AS annotator_id,
        trim(r.label) AS raw_label,
        nullif(r.evidence_span, '') AS evidence_span,
        nullif(trim(r.annotated_at), '') AS annotated_at_text,
        trim(r.codebook_version) AS codebook_version,
        trim(r.grader) AS grader,
        coalesce(nullif(trim(r.schema), ''), $default_schema) AS schema,
        to_json({claim_id: r.claim_id, citation_id: r.citation_id,
                 annotator_id: r.annotator_id, label: r.label,
                 evidence_span: r.evidence_span, annotated_at: r.annotated_at,
                 codebook_version: r.codebook_version, grader: r.grader,
                 schema: r.schema, atom_id: r.atom_id})::VARCHAR AS raw
    FROM annotation_rows AS r
    -- a blank line reads as a record of empty fields: skipped, like blank JSONL lines
    WHERE NOT (r.claim_id = '' AND r.citation_id = '' AND r.annotator_id = '' AND r.label = ''
        AND r.evidence_span = '' AND r.annotated_at = '' AND r.codebook_version = ''
        AND r.grader = '' AND r.schema = '' AND r.atom_id = '')
),
checked AS (
    SELECT
        r.*,
        try_cast(r.annotated_at_text AS TIMESTAMPTZ) AS annotated_at,
        m.label,
        cd.answer_id,
        cd.observation_date AS claim_date,
        CASE
            WHEN r.claim_id = '' THEN 'missing_field:claim_id'
            WHEN r.annotator_id = '' THEN 'missing_field:annotator_id'
            WHEN r.raw_label = '' THEN 'missing_field:label'
            WHEN r.codebook_version = '' THEN 'missing_field:codebook_version'
            WHEN r.grader = '' THEN 'missing_field:grader'
            WHEN r.annotated_at_text IS NOT NULL AND NOT (
                regexp_full_match(r.annotated_at_text,
                    '\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})')
                AND try_cast(r.annotated_at_text AS TIMESTAMPTZ) IS NOT NULL)
                THEN 'invalid_timestamp:annotated_at'
            WHEN r.codebook_version NOT IN (SELECT version FROM known_versions)
                THEN 'unknown_codebook_version:codebook_version'
            WHEN $registry_present AND a.annotator_id IS NULL
                THEN 'unknown_annotator:annotator_id'
            WHEN $registry_present AND (a.kind = 'human') <> (r.grader = 'human')
                THEN 'grader_mismatch:grader'
            WHEN r.schema NOT IN (SELECT schema FROM label_map)
                THEN 'unknown_schema:schema'
            WHEN m.label IS NULL THEN 'unknown_label:label'
            WHEN cd.claim_id IS NULL THEN 'orphan_claim:claim_id'
            WHEN r.citation_id IS NOT NULL AND ck.citation_id IS NULL
                THEN 'orphan_citation:citation_id'
        END AS failure,
        CASE
            WHEN r.claim_id = '' OR r.annotator_id = '' OR r.raw_label = ''
                OR r.codebook_version = '' OR r.grader = '' THEN 'empty value'
            WHEN r.annotated_at_text IS NOT NULL
                AND try_cast(r.annotated_at_text AS TIMESTAMPTZ) IS NULL
                THEN left(r.annotated_at_text, 100)
            WHEN r.codebook_version NOT IN (SELECT version FROM known_versions)
                THEN 'codebook version ' || r.codebook_version || ' has no codebooks/'
                    || r.codebook_version || '.yaml'
            WHEN $registry_present AND a.annotator_id IS NULL
                THEN r.annotator_id || ' is not in annotations/annotators.csv'
            WHEN $registry_present AND (a.kind = 'human') <> (r.grader = 'human')
                THEN 'registry kind ' || a.kind || ', row grader ' || r.grader
            WHEN r.schema NOT IN (SELECT schema FROM label_map)
                THEN 'codebook ' || $version || ' has no label map ' || r.schema
            WHEN m.label IS NULL
                THEN r.raw_label || ' is not in label_maps.' || r.schema || ' of ' || $version
            WHEN cd.claim_id IS NULL THEN r.claim_id || ' is in no claims table (unknown id, or '
                || 'its answer was rejected at ingestion: see rejected_inputs)'
            WHEN r.citation_id IS NOT NULL AND ck.citation_id IS NULL
                THEN r.citation_id || ' is not a citation of ' || r.claim_id
            ELSE left(r.annotated_at_text, 100)
        END AS failure_detail
    FROM rows AS r
    LEFT JOIN label_map AS m ON m.schema = r.schema AND m.raw_label = r.raw_label
    LEFT JOIN annotators AS a ON a.annotator_id = r.annotator_id
    LEFT JOIN claim_dates AS cd ON cd.claim_id = r.claim_id
    LEFT JOIN citation_keys AS ck
        ON ck.claim_id = r.claim_id AND ck.citation_id = r.citation_id
),
ranked AS (
    -- One judgment per annotator and item: among otherwise valid rows the first kept is the
    -- one judged under this codebook version, then the first by file and line.
    SELECT c.*,
        CASE WHEN failure IS NULL THEN row_number() OVER (
            PARTITION BY failure IS NULL, claim_id, coalesce(citation_id, ''),
                coalesce(atom_id, ''), annotator_id
            ORDER BY (codebook_version = $version) DESC, file, line) END AS occurrence,
        CASE WHEN failure IS NULL THEN first_value(file || ':' || line || ' (' || raw_label || ')')
            OVER (PARTITION BY failure IS NULL, claim_id, coalesce(citation_id, ''),
                coalesce(atom_id, ''), annotator_id
            ORDER BY (codebook_version = $version) DESC, file, line) END AS kept
    FROM checked AS c
)
SELECT
    file, line,
    coalesce(claim_date, file_date, $fallback_date) AS observation_date,
    claim_id, citation_id, atom_id, answer_id, annotator_id, grader, schema, raw_label, label,
    evidence_span, annotated_at, codebook_version,
    CASE WHEN failure IS NOT NULL THEN split_part(failure, ':', 1)
        WHEN occurrence > 1 THEN 'duplicate_judgment' END AS reason,
    CASE WHEN failure IS NOT NULL THEN split_part(failure, ':', 2)
        WHEN occurrence > 1 THEN 'annotator_id' END AS field,
    CASE WHEN failure IS NOT NULL THEN failure_detail
        WHEN occurrence > 1 THEN 'duplicate of ' || kept END AS detail,
    raw
FROM ranked
UNION ALL
SELECT file, line, coalesce(file_date, $fallback_date), NULL, NULL, NULL, NULL, NULL, NULL,
    NULL, NULL, NULL, NULL, NULL, NULL, reason, field, detail, raw
FROM file_defects
ORDER BY file, line
