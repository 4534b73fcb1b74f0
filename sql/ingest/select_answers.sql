-- Purpose: the `answers` table: one typed row per accepted answer, with its strata and cost.
-- Grain: one row per answer_id. Input: typed_answers (file, line, answer) from type_accepted_answers.
SELECT
    t.answer.answer_id,
    t.answer.query_id,
    t.answer.query_text,
    t.answer.engine,
    t.answer.observed_at::TIMESTAMPTZ AS observed_at,
    t.answer.answer_text,
    t.answer.context_chunk_ids,
    t.answer.strata.domain AS domain,
    t.answer.strata.risk_band AS risk_band,
    t.answer.strata.inclusion_prob AS inclusion_prob,
    t.answer.cost.input_tokens AS input_tokens,
    t.answer.cost.output_tokens AS output_tokens,
    len(t.answer.claims)::INTEGER AS n_claims,
    t.answer.system_version,
    -- the URLs of the sources the engine retrieved but no claim cites (engine imports)
    list_filter(list_transform(t.answer.retrieved_not_cited, lambda r: r.url),
        lambda u: u IS NOT NULL)
        AS retrieved_not_cited,
    t.file AS source_file,
    t.line::INTEGER AS source_line
FROM typed_answers AS t
ORDER BY t.answer.answer_id
