-- Purpose: L2 mechanical passage check: is each cited quote in the aligned capture's text —
-- located (inside its chunk_offset span, or anywhere when no span was given), shifted (found
-- elsewhere), normalized (found only after NFC, case and whitespace normalization), absent,
-- or unresolved (no text: no usable capture, or a payload without text; the cause in reason).
-- Offsets are 0-based code points, end exclusive; for `normalized` they index the normalized
-- text (offset_space says which). Grain: one row per citation with a non-empty quote.
-- Inputs: citations (quote, chunk_start, chunk_end), aligned (citation_captures), texts,
-- existence (citation_existence: reason soft_404).
WITH q AS (
    SELECT c.answer_id, c.claim_id, c.citation_id, c.quote, c.chunk_start, c.chunk_end,
        a.payload_sha256, a.resolution_issue, a.final_status,
        -- a soft-404 (L1 dead on strong evidence) is not the cited page: no text to look in
        CASE WHEN e.reason = 'soft_404' THEN NULL ELSE t.text END AS text,
        CASE WHEN e.reason = 'soft_404' THEN 'soft_404' ELSE t.error END AS text_error
    FROM citations AS c
    LEFT JOIN aligned AS a USING (citation_id)
    LEFT JOIN existence AS e USING (citation_id)
    LEFT JOIN texts AS t
        ON t.payload_sha256 = a.payload_sha256 AND a.resolution_issue IS NULL
        AND a.final_status BETWEEN 200 AND 299
    WHERE c.quote IS NOT NULL AND length(trim(c.quote)) > 0
),
m AS (
    SELECT *,
        CASE WHEN chunk_start IS NOT NULL AND chunk_end > chunk_start
            THEN strpos(substring(text, chunk_start + 1, chunk_end - chunk_start), quote)
        END AS in_chunk,
        strpos(text, quote) AS anywhere,
        regexp_replace(lower(nfc_normalize(text)), '\s+', ' ', 'g') AS norm_text,
        trim(regexp_replace(lower(nfc_normalize(quote)), '\s+', ' ', 'g')) AS norm_quote
    FROM q
),
n AS (
    SELECT *, strpos(norm_text, norm_quote) AS norm_pos FROM m
)
SELECT
    answer_id, claim_id, citation_id, payload_sha256,
    CASE
        WHEN text IS NULL THEN 'unresolved'
        WHEN in_chunk > 0 THEN 'located'
        WHEN anywhere > 0 AND chunk_start IS NULL THEN 'located'
        WHEN anywhere > 0 THEN 'shifted'
        WHEN norm_pos > 0 AND length(norm_quote) > 0 THEN 'normalized'
        ELSE 'absent'
    END AS verdict,
    CASE
        WHEN text IS NULL THEN NULL
        WHEN in_chunk > 0 THEN chunk_start + in_chunk - 1
        WHEN anywhere > 0 THEN anywhere - 1
        WHEN norm_pos > 0 AND length(norm_quote) > 0 THEN norm_pos - 1
    END::INTEGER AS match_start,
    CASE
        WHEN text IS NULL THEN NULL
        WHEN in_chunk > 0 THEN chunk_start + in_chunk - 1 + length(quote)
        WHEN anywhere > 0 THEN anywhere - 1 + length(quote)
        WHEN norm_pos > 0 AND length(norm_quote) > 0 THEN norm_pos - 1 + length(norm_quote)
    END::INTEGER AS match_end,
    CASE verdict
        WHEN 'normalized' THEN 'normalized_text'
        WHEN 'located' THEN 'text'
        WHEN 'shifted' THEN 'text'
    END AS offset_space,
    chunk_start, chunk_end,
    CASE
        WHEN text IS NOT NULL THEN NULL
        WHEN resolution_issue IS NOT NULL THEN resolution_issue
        WHEN payload_sha256 IS NULL THEN 'no_payload'
        WHEN final_status NOT BETWEEN 200 AND 299 THEN 'http_' || final_status
        -- the extraction error's code, without its free-text tail (`undecodable_body: ...`)
        ELSE coalesce(split_part(text_error, ':', 1), 'no_text')
    END AS reason
FROM n
ORDER BY answer_id, claim_id, citation_id
