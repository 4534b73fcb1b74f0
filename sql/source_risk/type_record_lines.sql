-- Purpose: parse source-risk JSONL lines once and type every field the record contract stores,
-- joined to the date's answers (answer and query snapshots) and, when present, aligned captures.
-- Grain: one row per non-blank input line (file, line). Inputs: sr_lines(file, line, raw,
-- line_sha256), sr_answers(answer_id, query_id, query_sha256, answer_text, answer_sha256,
-- observed_at), sr_sources(answer_id, source_url, canonical_url, rank, payload_sha256,
-- capture_time). Parameters: $weight_keys/$weight_values (the codebook's priority weights),
-- $pipeline_name/$pipeline_version/$pipeline_config (used when a line carries no pipeline).
-- JSON types are kept beside typed values so "U", 0, null and a missing key stay distinct.
WITH parsed AS (
    SELECT
        file, line, raw, line_sha256,
        CASE WHEN json_valid(raw) AND try(json_type(raw)) = 'OBJECT' THEN raw::JSON END AS j
    FROM sr_lines
),
fields AS (
    SELECT
        p.*,
        j ->> 'query_id' AS query_id,
        json_type(j -> 'query_id') AS query_id_type,
        j ->> 'answer_id' AS answer_id,
        json_type(j -> 'answer_id') AS answer_id_type,
        j ->> 'claim_id' AS claim_id,
        j ->> 'source_url' AS source_url,
        json_type(j -> 'source_url') AS source_url_type,
        j ->> 'source_role' AS source_role,
        j ->> 'annotator_id' AS annotator_id,
        j ->> 'annotated_at' AS annotated_at,
        j ->> 'codebook_version' AS codebook_version,
        json_type(j -> 'codebook_version') AS codebook_version_type,
        j ->> 'parent_record' AS parent_record,
        json_type(j -> 'parent_record') AS parent_record_type,
        j ->> 'tuple_digest' AS carried_tuple_digest,
        j ->> 'record_digest' AS carried_record_digest,
        j ->> 'query_sha256' AS carried_query_sha256,
        j ->> 'canonical_url' AS carried_canonical_url,
        try_cast(j ->> 'rank' AS INTEGER) AS carried_rank,
        j ->> 'collected_at' AS carried_collected_at,
        try_cast(j ->> 'support' AS TINYINT) AS support,
        j -> 'pipeline' AS pipeline_j,
        j -> 'source_snapshot' AS source_snap_j,
        j -> 'answer_snapshot' AS answer_snap_j,
        j -> 'predicates' AS preds_j,
        j -> 'evidence' AS ev_j,
        j -> 'dimensions' AS dims_j,
        j -> 'weights' AS weights_j
    FROM parsed AS p
)
SELECT
    f.file, f.line, f.raw, f.line_sha256, f.j IS NOT NULL AS is_object,
    f.query_id, f.query_id_type, f.answer_id, f.answer_id_type, f.claim_id,
    f.source_url, f.source_url_type, f.source_role, f.annotator_id, f.annotated_at,
    f.codebook_version, f.codebook_version_type, f.parent_record, f.parent_record_type,
    f.carried_tuple_digest, f.carried_record_digest, f.support,
    -- pipeline: carried as an object, else this run's
    json_type(f.pipeline_j) AS pipeline_type,
    CASE WHEN f.pipeline_j IS NULL THEN $pipeline_name ELSE f.pipeline_j ->> 'name' END
        AS pipeline_name,
    CASE WHEN f.pipeline_j IS NULL THEN $pipeline_version ELSE f.pipeline_j ->> 'version' END
        AS pipeline_version,
    CASE WHEN f.pipeline_j IS NULL THEN $pipeline_config ELSE f.pipeline_j ->> 'config' END
        AS pipeline_config,
    -- query identity and answer snapshot: carried, else from the answers table
    coalesce(f.carried_query_sha256, a.query_sha256) AS query_sha256,
    f.carried_query_sha256 IS NOT NULL AND a.query_sha256 IS NOT NULL
        AND f.carried_query_sha256 <> a.query_sha256 AS query_conflict,
    a.answer_id IS NOT NULL AS answer_known,
    f.answer_snap_j ->> 'sha256' AS answer_carried_sha256,
    f.answer_snap_j ->> 'text' AS answer_carried_text,
    coalesce(f.answer_snap_j ->> 'text', a.answer_text) AS answer_text,
    coalesce(f.answer_snap_j ->> 'origin',
             CASE WHEN a.answer_id IS NOT NULL THEN 'answers' END) AS answer_origin,
    a.answer_sha256 AS answer_joined_sha256,
    -- source snapshot: carried, else the aligned capture's payload digest, else the record
    f.source_snap_j ->> 'sha256' AS source_carried_sha256,
    f.source_snap_j ->> 'text' AS source_text,
    coalesce(f.source_snap_j ->> 'origin',
             CASE WHEN s.payload_sha256 IS NOT NULL THEN 'aligned_capture'
                  ELSE 'record_url' END) AS source_origin,
    s.payload_sha256 AS source_capture_sha256,
    coalesce(f.carried_canonical_url, s.canonical_url) AS canonical_url,
    coalesce(f.carried_rank, s.rank) AS rank,
    coalesce(f.carried_collected_at, s.capture_time, a.observed_at) AS collected_at,
    -- without a carried snapshot or an aligned capture, only the URL speaks for the source
    to_json(struct_pack(source_url := f.source_url)) AS source_record_json,
    -- predicates: JSON type per key ('NULL' = JSON null, NULL = key missing) and typed value
    json_type(f.preds_j) AS preds_type,
    json_type(f.preds_j -> 'I') AS i_type,
    json_type(f.preds_j -> 'A') AS a_type,
    json_type(f.preds_j -> 'M') AS m_type,
    json_type(f.preds_j -> 'D') AS d_type,
    try_cast(f.preds_j ->> 'I' AS TINYINT) AS i_val,
    try_cast(f.preds_j ->> 'A' AS TINYINT) AS a_val,
    try_cast(f.preds_j ->> 'M' AS TINYINT) AS m_val,
    try_cast(f.preds_j ->> 'D' AS TINYINT) AS d_val,
    json_type(f.ev_j) AS ev_type,
    f.ev_j,
    f.preds_j,
    -- dimensions and weights (carried weights override the codebook's)
    json_type(f.dims_j) AS dims_type,
    f.dims_j,
    json_type(f.weights_j) AS weights_type,
    f.weights_j,
    CASE WHEN f.weights_j IS NULL THEN map($weight_keys, $weight_values)
         ELSE try_cast(f.weights_j AS MAP(VARCHAR, DOUBLE)) END AS weights,
    try_cast(f.dims_j AS MAP(VARCHAR, DOUBLE)) AS dimensions
FROM fields AS f
LEFT JOIN sr_answers AS a ON a.answer_id = f.answer_id
LEFT JOIN sr_sources AS s ON s.answer_id = f.answer_id AND s.source_url = f.source_url
ORDER BY f.file, f.line
