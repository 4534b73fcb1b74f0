-- Purpose: a claim-level support label from the adjudicated pairs, for citation recall when
-- no claim_support table exists: the claim's citations taken together fully support it when
-- any pair is fully_supported; else unresolved when any pair is unresolved (it might be
-- supported); else the worst resolved label (contradicted > unsupported > partial).
-- Grain: one row per claim_id with at least one adjudicated pair. Input: support_labels.
SELECT
    claim_id,
    CASE
        WHEN bool_or(label = 'fully_supported') THEN 'fully_supported'
        WHEN bool_or(label NOT IN ('partially_supported', 'unsupported', 'contradicted')
            OR label IS NULL) THEN 'unresolved'
        WHEN bool_or(label = 'contradicted') THEN 'contradicted'
        WHEN bool_or(label = 'unsupported') THEN 'unsupported'
        ELSE 'partially_supported'
    END AS label
FROM support_labels
GROUP BY claim_id
