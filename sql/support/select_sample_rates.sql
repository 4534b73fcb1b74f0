-- Purpose: the support rates a drawn review sample gives, for the run summary: per date and
-- codebook, each support metric with prediction-powered columns, human-only and PPI side by
-- side with n (pairs people labelled in the sample), N (pairs graded), the interval width
-- ratio and the grader; a row whose estimate could not be made keeps its ppi_reason.
-- Only dates and codebooks with a drawn sample (ppi_reason no_sample is left out).
-- Grain: one row per (observation_date, codebook, metric), overall margin. Inputs: metrics.
SELECT
    observation_date::VARCHAR AS observation_date, codebook, metric,
    sample_estimate, sample_ci_low, sample_ci_high,
    ppi_estimate, ppi_ci_low, ppi_ci_high, ppi_lambda, ppi_width_ratio,
    n_human, n_graded, ppi_grader, ppi_reason
FROM metrics
WHERE margin = 'overall' AND ppi_grader IS NOT NULL
    AND ppi_reason IS DISTINCT FROM 'no_sample'
ORDER BY observation_date, codebook, metric
