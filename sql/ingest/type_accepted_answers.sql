-- Purpose: parse each accepted answer once into a typed nested struct (safe: every field was
-- checked by select_answer_defects), so the answers/claims/citations selects never re-parse text.
-- Grain: one row per accepted answer line. Input: accepted_answers (file, line, j).
SELECT
    file,
    line,
    json_transform(
        j,
        '{"answer_id": "VARCHAR", "query_id": "VARCHAR", "query_text": "VARCHAR",
          "engine": "VARCHAR", "observed_at": "VARCHAR", "answer_text": "VARCHAR",
          "context_chunk_ids": ["VARCHAR"],
          "strata": {"domain": "VARCHAR", "risk_band": "VARCHAR", "inclusion_prob": "DOUBLE"},
          "cost": {"input_tokens": "BIGINT", "output_tokens": "BIGINT"},
          "system_version": "VARCHAR", "retrieved_not_cited": [{"url": "VARCHAR"}],
          "claims": [{"claim_id": "VARCHAR", "span": ["INTEGER"], "text": "VARCHAR",
                      "verification_worthy": "BOOLEAN",
                      "citations": [{"citation_id": "VARCHAR", "tag": "VARCHAR",
                                     "source_id": "VARCHAR", "url": "VARCHAR",
                                     "retrieved_at": "VARCHAR", "chunk_offset": ["INTEGER"],
                                     "quote": "VARCHAR", "source_type": "VARCHAR",
                                     "title": "VARCHAR", "authors": ["VARCHAR"],
                                     "year": "INTEGER", "venue": "VARCHAR",
                                     "doi": "VARCHAR"}]}]}'
    ) AS answer
FROM accepted_answers
