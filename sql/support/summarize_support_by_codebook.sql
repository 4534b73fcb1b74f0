-- Purpose: the support block of the run summary: per codebook version, judgments accepted and
-- rejected, adjudicated verdicts by class (partial and unresolved beside full support, never in
-- it), ties, queued items and Krippendorff's alpha per date (NULL = undefined).
-- Grain: one row per codebook. Inputs: catalog views support_judgments, rejected_annotations,
-- support_labels, annotation_agreement.
WITH
j AS (SELECT codebook, count(*) AS judgments FROM support_judgments GROUP BY ALL),
r AS (SELECT codebook, count(*) AS rejected FROM rejected_annotations GROUP BY ALL),
l AS (
    SELECT codebook, count(*) AS items,
        count(*) FILTER (WHERE verdict = 'fully_supported') AS fully_supported,
        count(*) FILTER (WHERE verdict = 'partially_supported') AS partially_supported,
        count(*) FILTER (WHERE verdict = 'unsupported') AS unsupported,
        count(*) FILTER (WHERE verdict = 'contradicted') AS contradicted,
        count(*) FILTER (WHERE verdict = 'unresolved') AS unresolved,
        count(*) FILTER (WHERE tie) AS ties,
        count(*) FILTER (WHERE queued) AS queued
    FROM support_labels GROUP BY ALL
),
a AS (
    SELECT codebook,
        string_agg(coalesce(printf('%.3f', value), 'undefined'), ', '
            ORDER BY observation_date) AS alpha_by_date
    FROM annotation_agreement
    WHERE stratum = 'overall' AND statistic = 'krippendorff_alpha'
    GROUP BY ALL
)
SELECT l.codebook, coalesce(j.judgments, 0) AS judgments, coalesce(r.rejected, 0) AS rejected,
    l.items, l.fully_supported, l.partially_supported, l.unsupported, l.contradicted,
    l.unresolved, l.ties, l.queued, a.alpha_by_date
FROM l
LEFT JOIN j USING (codebook)
LEFT JOIN r USING (codebook)
LEFT JOIN a USING (codebook)
ORDER BY l.codebook
