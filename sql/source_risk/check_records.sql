-- Purpose: validate sealed source-risk records in the source-risk audit specification's execution order
-- (docs/references.md#source-risk-audit) and name the first
-- defect: (1) required fields and hashes, (2) predicate types and evidence offsets,
-- (3) dimension mapping and weights. Grain: one row per typed line, defect_type NULL when the
-- record conforms, with the fields a ledger row stores, in its input's order (the caller runs
-- it on one thread and checks the file and line order; a sort here cost a quarter of it). Input:
-- sr_sealed_records (seal_records, the step before in validate_batch: every typed, sealed
-- column). Function: sr_sha256(text) (hex SHA-256 in hashlib).
-- Parameter: $roles (the codebook's source roles). "U", 0, JSON null and a missing key are kept
-- apart (JSON type, map key presence): only JSON null is an unresolved predicate.
WITH hashed AS (
    SELECT r.*, sr_sha256(r.record_json) AS record_digest_calc
    FROM sr_sealed_records AS r
),
flags AS (
    SELECT
        s.*,
        -- I
        NOT coalesce(s.i_present, false)
            OR NOT (s.i_type IS NULL
                    OR (s.i_type IN ('UBIGINT', 'BIGINT') AND s.i_val IN (0, 1)))
            AS bad_label_i,
        coalesce(s.i_type IN ('UBIGINT', 'BIGINT'), false) AND NOT s.ev_i_present
            AS no_span_i,
        coalesce(s.i_type IN ('UBIGINT', 'BIGINT'), false) AND s.ev_i_present AND (
            s.ev_i_snapshot IS DISTINCT FROM 'source'
                AND s.ev_i_snapshot IS DISTINCT FROM 'answer'
            OR coalesce(s.ev_i_start_type, 'NULL') NOT IN ('UBIGINT', 'BIGINT')
            OR coalesce(s.ev_i_end_type, 'NULL') NOT IN ('UBIGINT', 'BIGINT')
            OR s.ev_i_start < 0
            OR s.ev_i_end <= s.ev_i_start
            OR coalesce(s.ev_i_end > length(CASE WHEN s.ev_i_snapshot = 'answer' THEN s.answer_text ELSE s.source_text END), false)) AS bad_span_i,
        coalesce(s.i_type IN ('UBIGINT', 'BIGINT'), false) AND s.ev_i_present AND (
            s.ev_i_quote_type IS DISTINCT FROM 'VARCHAR'
            OR s.ev_i_quote IS DISTINCT FROM coalesce(
                substring(CASE WHEN s.ev_i_snapshot = 'answer' THEN s.answer_text ELSE s.source_text END, s.ev_i_start + 1, s.ev_i_end - s.ev_i_start),
                -- no snapshot text at hand: the quote must at least have the span's length
                CASE WHEN length(s.ev_i_quote) = s.ev_i_end - s.ev_i_start
                     THEN s.ev_i_quote END)) AS bad_quote_i,
        -- A
        NOT coalesce(s.a_present, false)
            OR NOT (s.a_type IS NULL
                    OR (s.a_type IN ('UBIGINT', 'BIGINT') AND s.a_val IN (0, 1)))
            AS bad_label_a,
        coalesce(s.a_type IN ('UBIGINT', 'BIGINT'), false) AND NOT s.ev_a_present
            AS no_span_a,
        coalesce(s.a_type IN ('UBIGINT', 'BIGINT'), false) AND s.ev_a_present AND (
            s.ev_a_snapshot IS DISTINCT FROM 'source'
                AND s.ev_a_snapshot IS DISTINCT FROM 'answer'
            OR coalesce(s.ev_a_start_type, 'NULL') NOT IN ('UBIGINT', 'BIGINT')
            OR coalesce(s.ev_a_end_type, 'NULL') NOT IN ('UBIGINT', 'BIGINT')
            OR s.ev_a_start < 0
            OR s.ev_a_end <= s.ev_a_start
            OR coalesce(s.ev_a_end > length(CASE WHEN s.ev_a_snapshot = 'answer' THEN s.answer_text ELSE s.source_text END), false)) AS bad_span_a,
        coalesce(s.a_type IN ('UBIGINT', 'BIGINT'), false) AND s.ev_a_present AND (
            s.ev_a_quote_type IS DISTINCT FROM 'VARCHAR'
            OR s.ev_a_quote IS DISTINCT FROM coalesce(
                substring(CASE WHEN s.ev_a_snapshot = 'answer' THEN s.answer_text ELSE s.source_text END, s.ev_a_start + 1, s.ev_a_end - s.ev_a_start),
                -- no snapshot text at hand: the quote must at least have the span's length
                CASE WHEN length(s.ev_a_quote) = s.ev_a_end - s.ev_a_start
                     THEN s.ev_a_quote END)) AS bad_quote_a,
        -- M
        NOT coalesce(s.m_present, false)
            OR NOT (s.m_type IS NULL
                    OR (s.m_type IN ('UBIGINT', 'BIGINT') AND s.m_val IN (0, 1)))
            AS bad_label_m,
        coalesce(s.m_type IN ('UBIGINT', 'BIGINT'), false) AND NOT s.ev_m_present
            AS no_span_m,
        coalesce(s.m_type IN ('UBIGINT', 'BIGINT'), false) AND s.ev_m_present AND (
            s.ev_m_snapshot IS DISTINCT FROM 'source'
                AND s.ev_m_snapshot IS DISTINCT FROM 'answer'
            OR coalesce(s.ev_m_start_type, 'NULL') NOT IN ('UBIGINT', 'BIGINT')
            OR coalesce(s.ev_m_end_type, 'NULL') NOT IN ('UBIGINT', 'BIGINT')
            OR s.ev_m_start < 0
            OR s.ev_m_end <= s.ev_m_start
            OR coalesce(s.ev_m_end > length(CASE WHEN s.ev_m_snapshot = 'answer' THEN s.answer_text ELSE s.source_text END), false)) AS bad_span_m,
        coalesce(s.m_type IN ('UBIGINT', 'BIGINT'), false) AND s.ev_m_present AND (
            s.ev_m_quote_type IS DISTINCT FROM 'VARCHAR'
            OR s.ev_m_quote IS DISTINCT FROM coalesce(
                substring(CASE WHEN s.ev_m_snapshot = 'answer' THEN s.answer_text ELSE s.source_text END, s.ev_m_start + 1, s.ev_m_end - s.ev_m_start),
                -- no snapshot text at hand: the quote must at least have the span's length
                CASE WHEN length(s.ev_m_quote) = s.ev_m_end - s.ev_m_start
                     THEN s.ev_m_quote END)) AS bad_quote_m,
        -- D
        NOT coalesce(s.d_present, false)
            OR NOT (s.d_type IS NULL
                    OR (s.d_type IN ('UBIGINT', 'BIGINT') AND s.d_val IN (0, 1)))
            AS bad_label_d,
        coalesce(s.d_type IN ('UBIGINT', 'BIGINT'), false) AND NOT s.ev_d_present
            AS no_span_d,
        coalesce(s.d_type IN ('UBIGINT', 'BIGINT'), false) AND s.ev_d_present AND (
            s.ev_d_snapshot IS DISTINCT FROM 'source'
                AND s.ev_d_snapshot IS DISTINCT FROM 'answer'
            OR coalesce(s.ev_d_start_type, 'NULL') NOT IN ('UBIGINT', 'BIGINT')
            OR coalesce(s.ev_d_end_type, 'NULL') NOT IN ('UBIGINT', 'BIGINT')
            OR s.ev_d_start < 0
            OR s.ev_d_end <= s.ev_d_start
            OR coalesce(s.ev_d_end > length(CASE WHEN s.ev_d_snapshot = 'answer' THEN s.answer_text ELSE s.source_text END), false)) AS bad_span_d,
        coalesce(s.d_type IN ('UBIGINT', 'BIGINT'), false) AND s.ev_d_present AND (
            s.ev_d_quote_type IS DISTINCT FROM 'VARCHAR'
            OR s.ev_d_quote IS DISTINCT FROM coalesce(
                substring(CASE WHEN s.ev_d_snapshot = 'answer' THEN s.answer_text ELSE s.source_text END, s.ev_d_start + 1, s.ev_d_end - s.ev_d_start),
                -- no snapshot text at hand: the quote must at least have the span's length
                CASE WHEN length(s.ev_d_quote) = s.ev_d_end - s.ev_d_start
                     THEN s.ev_d_quote END)) AS bad_quote_d
    FROM hashed AS s
),
ev AS (
    SELECT
        p.*,
        concat_ws(',',
            CASE WHEN p.bad_label_i THEN 'I' END,
            CASE WHEN p.bad_label_a THEN 'A' END,
            CASE WHEN p.bad_label_m THEN 'M' END,
            CASE WHEN p.bad_label_d THEN 'D' END) AS bad_labels,
        concat_ws(',',
            CASE WHEN p.no_span_i THEN 'I' END,
            CASE WHEN p.no_span_a THEN 'A' END,
            CASE WHEN p.no_span_m THEN 'M' END,
            CASE WHEN p.no_span_d THEN 'D' END) AS no_span,
        concat_ws(',',
            CASE WHEN p.bad_span_i THEN 'I' END,
            CASE WHEN p.bad_span_a THEN 'A' END,
            CASE WHEN p.bad_span_m THEN 'M' END,
            CASE WHEN p.bad_span_d THEN 'D' END) AS bad_span,
        concat_ws(',',
            CASE WHEN p.bad_quote_i THEN 'I' END,
            CASE WHEN p.bad_quote_a THEN 'A' END,
            CASE WHEN p.bad_quote_m THEN 'M' END,
            CASE WHEN p.bad_quote_d THEN 'D' END) AS bad_quote,
        list_sort(map_keys(p.weights)) AS weight_keys
    FROM flags AS p
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
            WHEN e.preds_missing OR e.bad_labels <> ''
                THEN 'invalid_nullable_label'
            WHEN e.no_span <> '' THEN 'missing_span'
            WHEN e.bad_span <> '' THEN 'invalid_span'
            WHEN e.bad_quote <> '' THEN 'mismatched_quote'
            WHEN e.dims_missing OR e.bad_dims > 0
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
    c.raw,
    c.parent_record,
    -- the stored fields, so the batch's ledger rows are read from here without joining again
    c.query_id,
    c.query_sha256,
    c.answer_id,
    c.claim_id,
    c.source_url,
    c.canonical_url,
    c.rank,
    c.collected_at,
    c.source_role,
    c.codebook_version,
    c.annotator_id,
    c.annotated_at,
    c.i_val,
    c.a_val,
    c.m_val,
    c.d_val,
    c.support,
    c.dimensions,
    c.weights,
    c.source_sha256,
    c.source_origin,
    c.answer_sha256,
    c.answer_origin,
    c.pipeline_name,
    c.pipeline_version,
    c.pipeline_config,
    c.record_json,
    CASE
        WHEN c.defect_type IN ('invalid_nullable_label', 'missing_span', 'invalid_span',
                               'mismatched_quote') THEN 'predicates_and_evidence'
        WHEN c.defect_type IN ('inconsistent_dimensions', 'unnormalized_weights')
            THEN 'dimensions_and_weights'
        WHEN c.defect_type IS NOT NULL THEN 'fields_and_hashes'
    END AS stage,
    CASE c.defect_type
        WHEN 'invalid_nullable_label' THEN 'predicates ' || coalesce(
            nullif(c.bad_labels, ''), '(not an object)')
            || ': a missing key, "U", a string or a number other than 0/1 is not JSON null'
        WHEN 'missing_span' THEN 'resolved predicates without an evidence span: '
            || c.no_span
        WHEN 'invalid_span' THEN 'evidence spans out of range or mistyped: '
            || c.bad_span
        WHEN 'mismatched_quote' THEN 'quote differs from the snapshot text at the span: '
            || c.bad_quote
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
