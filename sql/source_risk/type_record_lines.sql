-- Purpose: parse source-risk JSONL lines once (json_transform into a typed struct) and type
-- every field the record contract stores, joined to the date's answers (answer and query
-- snapshots) and, when present, aligned captures.
-- Grain: one row per non-blank input line (file, line), unordered (the first step of
-- validate_batch, which orders once at the end). Inputs: sr_lines(file, line, raw,
-- line_sha256), sr_answers(answer_id, query_id, query_sha256, answer_text, answer_sha256,
-- observed_at), sr_sources(answer_id, source_url, canonical_url, rank, payload_sha256,
-- capture_time). Parameters: $weight_keys/$weight_values (the codebook's priority weights),
-- $pipeline_name/$pipeline_version/$pipeline_config (used when a line carries no pipeline).
-- Predicates and offsets keep their JSON type beside the typed value, so "U", 0, JSON null (key
-- present, value NULL) and a missing key (map_contains false) remain distinct.
WITH parsed AS (
    SELECT
        file, line, raw, line_sha256,
        -- json_valid first: TRY re-runs a whole vector row by row after one error, so a few
        -- malformed lines among many would otherwise make every vector slow
        CASE WHEN ltrim(raw) LIKE '{%' AND json_valid(raw) THEN try(json_transform(raw, '{
            "query_id": "JSON", "answer_id": "JSON", "claim_id": "VARCHAR",
            "source_url": "JSON", "source_role": "VARCHAR", "annotator_id": "VARCHAR",
            "annotated_at": "VARCHAR", "codebook_version": "JSON", "parent_record": "JSON",
            "tuple_digest": "VARCHAR", "record_digest": "VARCHAR", "query_sha256": "VARCHAR",
            "canonical_url": "VARCHAR", "rank": "JSON", "collected_at": "VARCHAR",
            "support": "JSON",
            "pipeline": {"name": "VARCHAR", "version": "VARCHAR", "config": "VARCHAR"},
            "source_snapshot": {"origin": "VARCHAR", "sha256": "VARCHAR", "text": "VARCHAR"},
            "answer_snapshot": {"origin": "VARCHAR", "sha256": "VARCHAR", "text": "VARCHAR"},
            "predicates": "MAP(VARCHAR, JSON)",
            "evidence": "MAP(VARCHAR, STRUCT(snapshot VARCHAR, \"start\" JSON, \"end\" JSON, quote JSON))",
            "dimensions": "MAP(VARCHAR, JSON)",
            "weights": "MAP(VARCHAR, JSON)"
        }')) END AS j
    FROM sr_lines
),
fields AS (
    SELECT
        p.file, p.line, p.raw, p.line_sha256, p.j IS NOT NULL AS is_object,
        p.j.query_id ->> '$' AS query_id,
        json_type(p.j.query_id) AS query_id_type,
        p.j.answer_id ->> '$' AS answer_id,
        json_type(p.j.answer_id) AS answer_id_type,
        p.j.claim_id AS claim_id,
        p.j.source_url ->> '$' AS source_url,
        json_type(p.j.source_url) AS source_url_type,
        p.j.source_role AS source_role,
        p.j.annotator_id AS annotator_id,
        p.j.annotated_at AS annotated_at,
        p.j.codebook_version ->> '$' AS codebook_version,
        json_type(p.j.codebook_version) AS codebook_version_type,
        p.j.parent_record ->> '$' AS parent_record,
        json_type(p.j.parent_record) AS parent_record_type,
        p.j.tuple_digest AS carried_tuple_digest,
        p.j.record_digest AS carried_record_digest,
        p.j.query_sha256 AS carried_query_sha256,
        p.j.canonical_url AS carried_canonical_url,
        try_cast(p.j.rank ->> '$' AS INTEGER) AS carried_rank,
        p.j.collected_at AS carried_collected_at,
        try_cast(p.j.support ->> '$' AS TINYINT) AS support,
        p.j.pipeline AS pipeline_s,
        p.j.source_snapshot AS source_snap,
        p.j.answer_snapshot AS answer_snap,
        p.j.predicates AS preds,
        p.j.evidence AS ev,
        -- each map entry looked up once (a MAP lookup scans the entries)
        p.j.predicates['I'] AS pred_i, p.j.predicates['A'] AS pred_a,
        p.j.predicates['M'] AS pred_m, p.j.predicates['D'] AS pred_d,
        p.j.evidence['I'] AS ev_i, p.j.evidence['A'] AS ev_a,
        p.j.evidence['M'] AS ev_m, p.j.evidence['D'] AS ev_d,
        p.j.dimensions AS dims_j,
        p.j.weights AS weights_j
    FROM parsed AS p
)
SELECT
    f.file, f.line, f.raw, f.line_sha256, f.is_object,
    f.query_id, f.query_id_type, f.answer_id, f.answer_id_type, f.claim_id,
    f.source_url, f.source_url_type, f.source_role, f.annotator_id, f.annotated_at,
    f.codebook_version, f.codebook_version_type, f.parent_record, f.parent_record_type,
    f.carried_tuple_digest, f.carried_record_digest, f.support,
    -- pipeline: carried (an object, possibly lacking fields), else this run's
    CASE WHEN f.pipeline_s IS NULL THEN $pipeline_name ELSE f.pipeline_s.name END
        AS pipeline_name,
    CASE WHEN f.pipeline_s IS NULL THEN $pipeline_version ELSE f.pipeline_s.version END
        AS pipeline_version,
    CASE WHEN f.pipeline_s IS NULL THEN $pipeline_config ELSE f.pipeline_s.config END
        AS pipeline_config,
    -- query identity and answer snapshot: carried, else from the answers table
    coalesce(f.carried_query_sha256, a.query_sha256) AS query_sha256,
    f.carried_query_sha256 IS NOT NULL AND a.query_sha256 IS NOT NULL
        AND f.carried_query_sha256 <> a.query_sha256 AS query_conflict,
    a.answer_id IS NOT NULL AS answer_known,
    f.answer_snap.sha256 AS answer_carried_sha256,
    f.answer_snap.text AS answer_carried_text,
    coalesce(f.answer_snap.text, a.answer_text) AS answer_text,
    coalesce(f.answer_snap.origin,
             CASE WHEN a.answer_id IS NOT NULL THEN 'answers' END) AS answer_origin,
    a.answer_sha256 AS answer_joined_sha256,
    -- source snapshot: carried, else the aligned capture's payload digest, else the record
    f.source_snap.sha256 AS source_carried_sha256,
    f.source_snap.text AS source_text,
    coalesce(f.source_snap.origin,
             CASE WHEN s.payload_sha256 IS NOT NULL THEN 'aligned_capture'
                  ELSE 'record_url' END) AS source_origin,
    s.payload_sha256 AS source_capture_sha256,
    coalesce(f.carried_canonical_url, s.canonical_url) AS canonical_url,
    coalesce(f.carried_rank, s.rank) AS rank,
    coalesce(f.carried_collected_at, s.capture_time, a.observed_at) AS collected_at,
    -- without a carried snapshot or an aligned capture, only the URL speaks for the source
    to_json(struct_pack(source_url := f.source_url)) AS source_record_json,
    -- predicates and evidence, one flat column per field (maps are read here once)
    f.preds IS NULL AS preds_missing,
    map_contains(f.preds, 'I') AS i_present,
    json_type(f.pred_i) AS i_type,
    try_cast(f.pred_i ->> '$' AS TINYINT) AS i_val,
    f.ev_i IS NOT NULL AS ev_i_present,
    f.ev_i.snapshot AS ev_i_snapshot,
    json_type(f.ev_i."start") AS ev_i_start_type,
    try_cast(f.ev_i."start" ->> '$' AS BIGINT) AS ev_i_start,
    json_type(f.ev_i."end") AS ev_i_end_type,
    try_cast(f.ev_i."end" ->> '$' AS BIGINT) AS ev_i_end,
    json_type(f.ev_i.quote) AS ev_i_quote_type,
    f.ev_i.quote ->> '$' AS ev_i_quote,
    map_contains(f.preds, 'A') AS a_present,
    json_type(f.pred_a) AS a_type,
    try_cast(f.pred_a ->> '$' AS TINYINT) AS a_val,
    f.ev_a IS NOT NULL AS ev_a_present,
    f.ev_a.snapshot AS ev_a_snapshot,
    json_type(f.ev_a."start") AS ev_a_start_type,
    try_cast(f.ev_a."start" ->> '$' AS BIGINT) AS ev_a_start,
    json_type(f.ev_a."end") AS ev_a_end_type,
    try_cast(f.ev_a."end" ->> '$' AS BIGINT) AS ev_a_end,
    json_type(f.ev_a.quote) AS ev_a_quote_type,
    f.ev_a.quote ->> '$' AS ev_a_quote,
    map_contains(f.preds, 'M') AS m_present,
    json_type(f.pred_m) AS m_type,
    try_cast(f.pred_m ->> '$' AS TINYINT) AS m_val,
    f.ev_m IS NOT NULL AS ev_m_present,
    f.ev_m.snapshot AS ev_m_snapshot,
    json_type(f.ev_m."start") AS ev_m_start_type,
    try_cast(f.ev_m."start" ->> '$' AS BIGINT) AS ev_m_start,
    json_type(f.ev_m."end") AS ev_m_end_type,
    try_cast(f.ev_m."end" ->> '$' AS BIGINT) AS ev_m_end,
    json_type(f.ev_m.quote) AS ev_m_quote_type,
    f.ev_m.quote ->> '$' AS ev_m_quote,
    map_contains(f.preds, 'D') AS d_present,
    json_type(f.pred_d) AS d_type,
    try_cast(f.pred_d ->> '$' AS TINYINT) AS d_val,
    f.ev_d IS NOT NULL AS ev_d_present,
    f.ev_d.snapshot AS ev_d_snapshot,
    json_type(f.ev_d."start") AS ev_d_start_type,
    try_cast(f.ev_d."start" ->> '$' AS BIGINT) AS ev_d_start,
    json_type(f.ev_d."end") AS ev_d_end_type,
    try_cast(f.ev_d."end" ->> '$' AS BIGINT) AS ev_d_end,
    json_type(f.ev_d.quote) AS ev_d_quote_type,
    f.ev_d.quote ->> '$' AS ev_d_quote,
    f.dims_j IS NULL AS dims_missing,
    len(list_filter(map_entries(f.dims_j), lambda e:
        coalesce(json_type(e.value), 'NULL') NOT IN ('UBIGINT', 'BIGINT', 'DOUBLE')
        OR try_cast(e.value ->> '$' AS DOUBLE) NOT BETWEEN 0 AND 1)) AS bad_dims,
    list_sort(map_keys(f.dims_j)) AS dim_keys,
    -- maps in key order, as the canonical JSON needs them ($weight_keys come sorted)
    CASE WHEN f.weights_j IS NULL THEN map($weight_keys, $weight_values)
         ELSE map_from_entries(list_sort(list_transform(map_entries(f.weights_j), lambda e:
              struct_pack(key := e.key, value := try_cast(e.value ->> '$' AS DOUBLE)))))
    END AS weights,
    map_from_entries(list_sort(list_transform(map_entries(f.dims_j), lambda e:
        struct_pack(key := e.key, value := try_cast(e.value ->> '$' AS DOUBLE))))) AS dimensions
FROM fields AS f
LEFT JOIN sr_answers AS a ON a.answer_id = f.answer_id
LEFT JOIN sr_sources AS s ON s.answer_id = f.answer_id AND s.source_url = f.source_url
