-- Purpose: the `answers` table: one typed row per accepted answer, with its strata and cost.
-- Grain: one row per answer_id. Input: accepted_answers (file, line, j).
SELECT
    j ->> '$.answer_id' AS answer_id,
    j ->> '$.query_id' AS query_id,
    j ->> '$.query_text' AS query_text,
    j ->> '$.engine' AS engine,
    (j ->> '$.observed_at')::TIMESTAMPTZ AS observed_at,
    j ->> '$.answer_text' AS answer_text,
    CASE
        WHEN json_type(j, '$.context_chunk_ids') = 'ARRAY'
            THEN CAST(j -> '$.context_chunk_ids' AS VARCHAR[])
    END AS context_chunk_ids,
    j ->> '$.strata.domain' AS domain,
    j ->> '$.strata.risk_band' AS risk_band,
    (j ->> '$.strata.inclusion_prob')::DOUBLE AS inclusion_prob,
    (j ->> '$.cost.input_tokens')::BIGINT AS input_tokens,
    (j ->> '$.cost.output_tokens')::BIGINT AS output_tokens,
    json_array_length(j, '$.claims')::INTEGER AS n_claims,
    file AS source_file,
    line::INTEGER AS source_line
FROM accepted_answers
ORDER BY answer_id
