-- Purpose: one batch's checked rows in file and line order, for the rare batch whose lines
-- did not come in that order (validate.Ledger.add checks the order of sr_checked, which the
-- batch statement keeps from its input on one thread, and sorts only then).
-- Grain: one row per typed line of the batch, as sr_checked (check_records).
SELECT *
FROM sr_checked
ORDER BY file, line
