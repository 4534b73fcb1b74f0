-- Purpose: validate sealed source-risk records in seed 000 §III-C order and name the first
-- defect: (1) required fields and hashes, (2) predicate types and evidence offsets,
-- (3) dimension mapping and weights. Grain: one row per typed line, defect_type NULL when the
-- record conforms. Inputs: sr_typed, sr_sealed_tuples,
-- sr_sealed_records, sr_record_hashes(file, line, record_digest_calc).
-- Parameter: $roles (the codebook's source roles). "U", 0, JSON null and a missing key are kept
-- apart (JSON type, map key presence): only JSON null is an unresolved predicate.
WITH pred AS (
    SELECT
        s.*,
        st.answer_text_sha256,
        st.source_text_sha256,
        sr.tuple_digest,
        sr.tuple_digest_calc,
        h.record_digest_calc,
        -- predicates whose key is missing or whose value is not 0, 1 or JSON null
        list_filter(['I', 'A', 'M', 'D'], lambda k:
            NOT map_contains(s.preds, k)
            OR NOT (s.preds[k] IS NULL
                    OR (json_type(s.preds[k]) IN ('UBIGINT', 'BIGINT')
                        AND (s.preds[k] ->> '$') IN ('0', '1')))) AS bad_labels,
        list_filter(['I', 'A', 'M', 'D'], lambda k:
            json_type(s.preds[k]) IN ('UBIGINT', 'BIGINT')) AS resolved
    FROM sr_typed AS s
    JOIN sr_sealed_tuples AS st USING (file, line)
    JOIN sr_sealed_records AS sr USING (file, line)
    JOIN sr_record_hashes AS h USING (file, line)
),
ev AS (
    SELECT
        p.*,
        list_filter(p.resolved, lambda k: p.ev IS NULL OR p.ev[k] IS NULL) AS no_span,
        list_filter(p.resolved, lambda k:
            p.ev[k].snapshot IS DISTINCT FROM 'source'
                AND p.ev[k].snapshot IS DISTINCT FROM 'answer'
            OR coalesce(json_type(p.ev[k]."start"), 'NULL') NOT IN ('UBIGINT', 'BIGINT')
            OR coalesce(json_type(p.ev[k]."end"), 'NULL') NOT IN ('UBIGINT', 'BIGINT')
            OR try_cast(p.ev[k]."start" ->> '$' AS BIGINT) < 0
            OR try_cast(p.ev[k]."end" ->> '$' AS BIGINT)
                <= try_cast(p.ev[k]."start" ->> '$' AS BIGINT)
            OR try_cast(p.ev[k]."end" ->> '$' AS BIGINT) > length(
                CASE WHEN p.ev[k].snapshot = 'answer' THEN p.answer_text
                     ELSE p.source_text END)) AS bad_span,
        list_filter(p.resolved, lambda k:
            json_type(p.ev[k].quote) IS DISTINCT FROM 'VARCHAR'
            OR (p.ev[k].quote ->> '$') IS DISTINCT FROM coalesce(
                substring(
                    CASE WHEN p.ev[k].snapshot = 'answer' THEN p.answer_text
                         ELSE p.source_text END,
                    try_cast(p.ev[k]."start" ->> '$' AS BIGINT) + 1,
                    try_cast(p.ev[k]."end" ->> '$' AS BIGINT)
                        - try_cast(p.ev[k]."start" ->> '$' AS BIGINT)),
                -- no snapshot text at hand: the quote must at least have the span's length
                CASE WHEN length(p.ev[k].quote ->> '$')
                        = try_cast(p.ev[k]."end" ->> '$' AS BIGINT)
                          - try_cast(p.ev[k]."start" ->> '$' AS BIGINT)
                     THEN p.ev[k].quote ->> '$' END)) AS bad_quote,
        list_filter(map_entries(p.dims_j), lambda e:
            coalesce(json_type(e.value), 'NULL') NOT IN ('UBIGINT', 'BIGINT', 'DOUBLE')
            OR try_cast(e.value ->> '$' AS DOUBLE) NOT BETWEEN 0 AND 1) AS bad_dims,
        list_sort(map_keys(p.dims_j)) AS dim_keys,
        list_sort(map_keys(p.weights)) AS weight_keys
    FROM pred AS p
),
checked AS (
    SELECT
        e.*,
        CASE
            WHEN NOT e.is_object THEN 'malformed_json'
            WHEN e.codebook_version_type IS DISTINCT FROM 'VARCHAR' OR e.codebook_version = ''
                THEN 'missing_codebook'
            WHEN coalesce(e.pipeline_name, '') = '' OR coalesce(e.pipeline_version, '') = ''
                OR coalesce(e.pipeline_config, '') = '' THEN 'missing_pipeline_field'
            WHEN e.query_id_type IS DISTINCT FROM 'VARCHAR' OR e.query_id = ''
                OR e.answer_id_type IS DISTINCT FROM 'VARCHAR' OR e.answer_id = ''
                OR e.source_url_type IS DISTINCT FROM 'VARCHAR' OR e.source_url = ''
                THEN 'identity_mismatch'
            WHEN coalesce(e.annotator_id, '') = '' OR coalesce(e.source_role, '') = ''
                THEN 'missing_required_field'
            WHEN NOT list_contains($roles, e.source_role) THEN 'unknown_source_role'
            WHEN NOT e.answer_known AND e.answer_carried_sha256 IS NULL
                AND e.answer_carried_text IS NULL THEN 'unknown_answer'
            WHEN e.source_carried_sha256 IS NOT NULL AND (
                    e.source_carried_sha256 IS DISTINCT FROM
                        coalesce(e.source_text_sha256, e.source_capture_sha256,
                                 e.source_carried_sha256))
                THEN 'source_snapshot_checksum'
            WHEN e.answer_carried_sha256 IS NOT NULL AND e.answer_text_sha256 IS NOT NULL
                AND e.answer_carried_sha256 <> e.answer_text_sha256
                THEN 'answer_snapshot_checksum'
            WHEN e.query_sha256 IS NULL OR e.query_conflict
                OR (e.carried_tuple_digest IS NOT NULL
                    AND e.carried_tuple_digest <> e.tuple_digest_calc)
                THEN 'identity_mismatch'
            WHEN e.carried_record_digest IS NOT NULL
                AND e.carried_record_digest <> e.record_digest_calc THEN 'record_checksum'
            WHEN e.parent_record_type IS NOT NULL AND e.parent_record_type NOT IN ('NULL', 'VARCHAR')
                THEN 'missing_required_field'
            WHEN e.preds IS NULL OR len(e.bad_labels) > 0
                THEN 'invalid_nullable_label'
            WHEN len(e.no_span) > 0 THEN 'missing_span'
            WHEN len(e.bad_span) > 0 THEN 'invalid_span'
            WHEN len(e.bad_quote) > 0 THEN 'mismatched_quote'
            WHEN e.dims_j IS NULL OR len(e.bad_dims) > 0
                OR e.dim_keys IS DISTINCT FROM e.weight_keys THEN 'inconsistent_dimensions'
            WHEN e.weights IS NULL
                OR list_bool_or(list_transform(map_values(e.weights),
                                lambda w: w IS NULL OR w < 0 OR w > 1))
                OR abs(list_sum(map_values(e.weights)) - 1.0) > 1e-9
                THEN 'unnormalized_weights'
        END AS defect_type
    FROM ev AS e
)
SELECT
    c.file,
    c.line,
    c.defect_type,
    c.tuple_digest,
    c.tuple_digest_calc,
    c.record_digest_calc,
    c.line_sha256,
    c.parent_record,
    CASE
        WHEN c.defect_type IN ('invalid_nullable_label', 'missing_span', 'invalid_span',
                               'mismatched_quote') THEN 'predicates_and_evidence'
        WHEN c.defect_type IN ('inconsistent_dimensions', 'unnormalized_weights')
            THEN 'dimensions_and_weights'
        WHEN c.defect_type IS NOT NULL THEN 'fields_and_hashes'
    END AS stage,
    CASE c.defect_type
        WHEN 'invalid_nullable_label' THEN 'predicates ' || coalesce(
            array_to_string(c.bad_labels, ','), '(not an object)')
            || ': a missing key, "U", a string or a number other than 0/1 is not JSON null'
        WHEN 'missing_span' THEN 'resolved predicates without an evidence span: '
            || array_to_string(c.no_span, ',')
        WHEN 'invalid_span' THEN 'evidence spans out of range or mistyped: '
            || array_to_string(c.bad_span, ',')
        WHEN 'mismatched_quote' THEN 'quote differs from the snapshot text at the span: '
            || array_to_string(c.bad_quote, ',')
        WHEN 'inconsistent_dimensions' THEN 'dimensions ' || coalesce(to_json(c.dim_keys)::VARCHAR, 'missing')
            || ' do not match the weighted dimensions ' || coalesce(to_json(c.weight_keys)::VARCHAR, '?')
            || ' or lie outside [0, 1]'
        WHEN 'unnormalized_weights' THEN 'priority weights must lie in [0, 1] and sum to 1, they sum to '
            || coalesce(list_sum(map_values(c.weights))::VARCHAR, 'nothing')
        WHEN 'record_checksum' THEN 'record_digest ' || c.carried_record_digest
            || ' is not the SHA-256 of the stored fields (' || c.record_digest_calc || ')'
        WHEN 'identity_mismatch' THEN CASE
            WHEN c.query_id_type IS DISTINCT FROM 'VARCHAR' OR c.answer_id_type IS DISTINCT FROM 'VARCHAR'
                OR c.source_url_type IS DISTINCT FROM 'VARCHAR' OR c.query_id = '' OR c.answer_id = ''
                OR c.source_url = '' THEN 'query_id, answer_id and source_url are required strings'
            WHEN c.query_sha256 IS NULL THEN 'no query identity: answer unknown and no query_sha256'
            WHEN c.query_conflict THEN 'query_sha256 differs from the answers table'
            ELSE 'tuple_digest ' || c.carried_tuple_digest
                || ' does not bind this query, source, answer and pipeline ('
                || c.tuple_digest_calc || ')' END
        WHEN 'source_snapshot_checksum' THEN 'source snapshot sha256 ' || c.source_carried_sha256
            || ' differs from its content (' || coalesce(c.source_text_sha256, c.source_capture_sha256) || ')'
        WHEN 'answer_snapshot_checksum' THEN 'answer snapshot sha256 ' || c.answer_carried_sha256
            || ' differs from its content (' || c.answer_text_sha256 || ')'
        WHEN 'missing_codebook' THEN 'codebook_version is required (a non-empty string)'
        WHEN 'missing_pipeline_field' THEN 'pipeline needs name, version and config'
        WHEN 'missing_required_field' THEN 'annotator_id and source_role are required strings; '
            || 'parent_record is a digest or null'
        WHEN 'unknown_source_role' THEN 'source_role ' || c.source_role
            || ' is not in the codebook''s taxonomy'
        WHEN 'unknown_answer' THEN 'answer_id ' || c.answer_id
            || ' is not an accepted answer of this date and the record carries no answer snapshot'
        WHEN 'malformed_json' THEN 'the line is not a JSON object'
    END AS reason
FROM checked AS c
ORDER BY c.file, c.line
