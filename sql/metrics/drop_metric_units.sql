-- Purpose: free the units once they are counted and coded (the intervals need only the
-- arrays taken from them).
-- Grain: none (drops metric_units).
DROP TABLE IF EXISTS metric_units
