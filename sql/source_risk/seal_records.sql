-- Purpose: the canonical JSON of every stored field of a record (keys sorted, no spaces; the
-- record digest is the SHA-256 of it). Grain: one row per typed line: every column of
-- sr_sealed_tuples (seal_tuples, the step before in validate_batch) and the new ones.
-- Function: sr_sha256(text) (hex SHA-256 in hashlib).
-- A carried tuple digest is what the record stores
-- (it is checked against tuple_digest_calc afterwards); otherwise the computed one is stored.
WITH h AS (
    SELECT t.*, sr_sha256(t.tuple_json) AS tuple_digest_calc
    FROM sr_sealed_tuples AS t
)
SELECT
    s.*,
    coalesce(s.carried_tuple_digest, s.tuple_digest_calc) AS tuple_digest,
    to_json(struct_pack(
        annotated_at := annotated_at,
        annotator_id := annotator_id,
        answer_id := answer_id,
        answer_snapshot := struct_pack(origin := answer_origin, sha256 := s.answer_sha256,
                                       text := answer_carried_text),
        canonical_url := canonical_url,
        claim_id := claim_id,
        codebook_version := codebook_version,
        collected_at := collected_at,
        dimensions := s.dimensions,
        evidence := struct_pack(
            A := CASE WHEN ev_a_present THEN
                struct_pack("end" := ev_a_end, quote := ev_a_quote,
                            snapshot := ev_a_snapshot, start := ev_a_start) END,
            D := CASE WHEN ev_d_present THEN
                struct_pack("end" := ev_d_end, quote := ev_d_quote,
                            snapshot := ev_d_snapshot, start := ev_d_start) END,
            I := CASE WHEN ev_i_present THEN
                struct_pack("end" := ev_i_end, quote := ev_i_quote,
                            snapshot := ev_i_snapshot, start := ev_i_start) END,
            M := CASE WHEN ev_m_present THEN
                struct_pack("end" := ev_m_end, quote := ev_m_quote,
                            snapshot := ev_m_snapshot, start := ev_m_start) END
        ),
        parent_record := parent_record,
        pipeline := struct_pack(config := pipeline_config, name := pipeline_name,
                                version := pipeline_version),
        predicates := struct_pack(A := a_val, D := d_val, I := i_val, M := m_val),
        query_id := query_id,
        query_sha256 := query_sha256,
        rank := rank,
        source_role := source_role,
        source_snapshot := struct_pack(origin := source_origin, sha256 := s.source_sha256,
                                       text := source_text),
        source_url := source_url,
        support := support,
        tuple_digest := coalesce(carried_tuple_digest, s.tuple_digest_calc),
        weights := s.weights
    )) AS record_json
FROM h AS s
