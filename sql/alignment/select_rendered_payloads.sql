-- Purpose: the text source of each citation. Where a browser rendered the final capture (a
-- `resource` record `urn:rendered-dom:<final_uri>` with the final capture's WARC-Date,
-- citeaudit/archive/capture/browser.py), the payload columns point at the rendered DOM and
-- capture_fidelity is 'rendered': L2 and the page checks read what the browser showed, not the
-- script shell the static fetch got. Otherwise the capture's own payload ('static'); NULL when
-- there is no usable payload. A rendered record that is truncated or unreadable is not used.
-- Grain: one row per citation. Inputs: captured (citation_captures before this step),
-- rendered (select_rendered_captures); $prefix ('urn:rendered-dom:').
SELECT
    c.* REPLACE (
        coalesce(r.file, c.payload_file) AS payload_file,
        coalesce(r."offset", c.payload_offset) AS payload_offset,
        coalesce(r.payload_sha256, c.payload_sha256) AS payload_sha256
    ),
    CASE
        WHEN r.file IS NOT NULL THEN 'rendered'
        WHEN c.resolution_issue IS NULL AND c.payload_sha256 IS NOT NULL THEN 'static'
    END AS capture_fidelity
FROM captured AS c
LEFT JOIN rendered AS r
    ON c.resolution_issue IS NULL AND c.final_status BETWEEN 200 AND 299
    AND r.target_uri = $prefix || c.final_uri AND r.capture_time = c.final_capture_time
ORDER BY c.answer_id, c.claim_id, c.citation_id
