-- Purpose: every answer, claim and citation id of a batch of answer lines with where it sits,
-- so duplicates can be found within the batch and against earlier batches (seen_ids).
-- Grain: one row per id occurrence. Inputs: answer_json, claim_objects, citation_objects.
SELECT file, line, -1 AS claim_index, -1 AS citation_index, 'answer_id' AS kind,
    'answer_id' AS field, j ->> '$.answer_id' AS id
FROM answer_json WHERE j IS NOT NULL AND json_type(j, '$.answer_id') = 'VARCHAR'
UNION ALL
SELECT file, line, claim_index, -1, 'claim_id',
    'claims[' || claim_index || '].claim_id', claim ->> '$.claim_id'
FROM claim_objects WHERE json_type(claim, '$.claim_id') = 'VARCHAR'
UNION ALL
SELECT file, line, claim_index, citation_index, 'citation_id',
    'claims[' || claim_index || '].citations[' || citation_index || '].citation_id',
    citation ->> '$.citation_id'
FROM citation_objects WHERE json_type(citation, '$.citation_id') = 'VARCHAR'
