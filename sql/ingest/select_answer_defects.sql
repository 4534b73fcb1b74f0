-- Purpose: every defect of every answers JSONL line: malformed JSON, missing or mistyped fields,
-- bad timestamps, spans out of range, duplicate ids. A line with any defect is rejected whole
-- (a partial answer could hide an uncited claim), so this lists each defect it has.
-- Grain: one row per (file, line, field, reason). Inputs: answer_json (parse_answer_lines),
-- claim_objects and citation_objects (unnest_*_objects), batch_ids (select_line_ids) and
-- seen_ids (ids of earlier batches of the same date).
-- Field paths are 0-based: claims[2].citations[0].url.
WITH
answer_fields (field, kind, required, parent) AS (
    VALUES
        ('answer_id', 'string', true, NULL),
        ('query_id', 'string', true, NULL),
        ('query_text', 'string', true, NULL),
        ('engine', 'string', true, NULL),
        ('observed_at', 'timestamp', true, NULL),
        ('answer_text', 'string', true, NULL),
        ('context_chunk_ids', 'string_list', false, NULL),
        ('strata', 'object', true, NULL),
        ('strata.domain', 'string', true, 'strata'),
        ('strata.risk_band', 'string', true, 'strata'),
        ('strata.inclusion_prob', 'probability', true, 'strata'),
        ('cost', 'object', false, NULL),
        ('cost.input_tokens', 'count', true, 'cost'),
        ('cost.output_tokens', 'count', true, 'cost'),
        ('claims', 'array', true, NULL),
        ('system_version', 'string', false, NULL),
        ('retrieved_not_cited', 'array', false, NULL)
),
claim_fields (field, kind, required) AS (
    VALUES
        ('claim_id', 'string', true),
        ('span', 'offsets', true),
        ('text', 'string', true),
        ('verification_worthy', 'boolean', false),
        ('citations', 'array', true)
),
citation_fields (field, kind, required) AS (
    VALUES
        ('citation_id', 'string', true),
        ('tag', 'string', false),
        ('source_id', 'string', false),
        ('url', 'string', false),
        ('retrieved_at', 'timestamp', false),
        ('chunk_offset', 'offsets', false),
        ('quote', 'string', false),
        ('source_type', 'string', false),
        ('title', 'string', false),
        ('authors', 'string_list', false),
        ('year', 'integer', false),
        ('venue', 'string', false),
        ('doi', 'string', false)
),
objects AS (
    SELECT file, line, j FROM answer_json WHERE j IS NOT NULL
),
field_values AS (
    SELECT o.file, o.line, f.field AS path, f.kind, f.required,
        json_extract(o.j, '$.' || f.field) AS v
    FROM objects AS o, answer_fields AS f
    WHERE f.parent IS NULL OR json_type(o.j, '$.' || f.parent) = 'OBJECT'
    UNION ALL
    SELECT cl.file, cl.line, 'claims[' || cl.claim_index || ']', 'object', true, cl.claim
    FROM claim_objects AS cl
    UNION ALL
    SELECT cl.file, cl.line, 'claims[' || cl.claim_index || '].' || f.field, f.kind, f.required,
        json_extract(cl.claim, '$.' || f.field)
    FROM claim_objects AS cl, claim_fields AS f
    WHERE json_type(cl.claim) = 'OBJECT'
    UNION ALL
    SELECT ci.file, ci.line, 'claims[' || ci.claim_index || '].citations[' || ci.citation_index || ']',
        'object', true, ci.citation
    FROM citation_objects AS ci
    UNION ALL
    SELECT ci.file, ci.line,
        'claims[' || ci.claim_index || '].citations[' || ci.citation_index || '].' || f.field,
        f.kind, f.required, json_extract(ci.citation, '$.' || f.field)
    FROM citation_objects AS ci, citation_fields AS f
    WHERE json_type(ci.citation) = 'OBJECT'
),
typed AS (
    SELECT *, coalesce(json_type(v), 'NULL') AS t FROM field_values
),
field_defects AS (
    SELECT file, line, path AS field,
        CASE
            WHEN t = 'NULL' THEN CASE WHEN required THEN 'missing_field' END
            WHEN kind IN ('string', 'timestamp') AND t <> 'VARCHAR' THEN 'wrong_type'
            WHEN kind = 'timestamp'
                AND NOT (
                    regexp_full_match(
                        v ->> '$',
                        '\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})'
                    )
                    AND try_cast(v ->> '$' AS TIMESTAMPTZ) IS NOT NULL
                ) THEN 'invalid_timestamp'
            WHEN kind = 'boolean' AND t <> 'BOOLEAN' THEN 'wrong_type'
            WHEN kind = 'object' AND t <> 'OBJECT' THEN 'wrong_type'
            WHEN kind = 'array' AND t <> 'ARRAY' THEN 'wrong_type'
            WHEN kind = 'integer' AND t NOT IN ('BIGINT', 'UBIGINT') THEN 'wrong_type'
            WHEN kind = 'count' AND t NOT IN ('BIGINT', 'UBIGINT') THEN 'wrong_type'
            WHEN kind = 'count' AND try_cast(v AS BIGINT) < 0 THEN 'out_of_range'
            WHEN kind = 'probability' AND t NOT IN ('BIGINT', 'UBIGINT', 'DOUBLE') THEN 'wrong_type'
            WHEN kind = 'probability' AND NOT (v::DOUBLE > 0 AND v::DOUBLE <= 1) THEN 'out_of_range'
            WHEN kind = 'string_list' AND t <> 'ARRAY' THEN 'wrong_type'
            WHEN kind = 'string_list'
                AND NOT coalesce(
                    list_bool_and(list_transform(json_extract(v, '$[*]'), lambda x: json_type(x) = 'VARCHAR')),
                    true
                ) THEN 'wrong_type'
            WHEN kind = 'offsets'
                AND NOT (
                    t = 'ARRAY'
                    AND json_array_length(v) = 2
                    AND json_type(v, '$[0]') IN ('BIGINT', 'UBIGINT')
                    AND json_type(v, '$[1]') IN ('BIGINT', 'UBIGINT')
                ) THEN 'wrong_type'
            WHEN kind = 'offsets'
                AND NOT ((v ->> '$[0]')::BIGINT >= 0 AND (v ->> '$[0]')::BIGINT < (v ->> '$[1]')::BIGINT)
                THEN 'span_out_of_range'
        END AS reason,
        CASE WHEN t <> 'NULL' THEN left(v::VARCHAR, 200) END AS detail
    FROM typed
),
span_defects AS (
    -- A well-formed claim span must also lie inside answer_text (character offsets).
    SELECT cl.file, cl.line, 'claims[' || cl.claim_index || '].span' AS field,
        'span_out_of_range' AS reason,
        left(json_extract(cl.claim, '$.span')::VARCHAR, 200)
            || ' beyond answer_text length ' || cl.answer_text_length AS detail
    FROM claim_objects AS cl
    WHERE cl.answer_text_length IS NOT NULL
        AND json_type(cl.claim) = 'OBJECT'
        AND json_type(cl.claim, '$.span') = 'ARRAY'
        AND json_array_length(cl.claim, '$.span') = 2
        AND json_type(cl.claim, '$.span[1]') IN ('BIGINT', 'UBIGINT')
        AND json_type(cl.claim, '$.span[0]') IN ('BIGINT', 'UBIGINT')
        AND (cl.claim ->> '$.span[0]')::BIGINT >= 0
        AND (cl.claim ->> '$.span[0]')::BIGINT < (cl.claim ->> '$.span[1]')::BIGINT
        AND (cl.claim ->> '$.span[1]')::BIGINT > cl.answer_text_length
),
duplicate_defects AS (
    -- The first occurrence (by file, line, position) keeps an id; every later one is a defect,
    -- including an id already seen in an earlier batch of the same date (seen_ids).
    SELECT file, line, field, 'duplicate_id' AS reason, id AS detail
    FROM (
        SELECT b.*,
            row_number() OVER (
                PARTITION BY b.kind, b.id ORDER BY b.file, b.line, b.claim_index, b.citation_index
            ) AS occurrence,
            s.id IS NOT NULL AS seen_before
        FROM batch_ids AS b
        LEFT JOIN seen_ids AS s ON s.kind = b.kind AND s.id = b.id
    )
    WHERE occurrence > 1 OR seen_before
),
line_defects AS (
    SELECT file, line, NULL AS field,
        CASE
            WHEN NOT utf8_ok THEN 'invalid_utf8'
            WHEN top_type IS NULL THEN 'malformed_json'
            ELSE 'not_an_object'
        END AS reason,
        top_type AS detail
    FROM answer_json
    WHERE j IS NULL
)
SELECT file, line, field, reason, detail FROM line_defects
UNION ALL
SELECT file, line, field, reason, detail FROM field_defects WHERE reason IS NOT NULL
UNION ALL
SELECT file, line, field, reason, detail FROM span_defects
UNION ALL
SELECT file, line, field, reason, detail FROM duplicate_defects
ORDER BY file, line, field NULLS FIRST, reason
