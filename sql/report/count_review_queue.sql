-- Purpose: the size of the review queue of one date × codebook, by the reason an item was
-- queued (ties, partial support, sampled supported items ...), for the report.
-- Grain: one row per reason. Input: review_queue.
SELECT coalesce(reason, '(no reason)') AS reason, count(*) AS n
FROM review_queue
GROUP BY ALL
ORDER BY n DESC, reason
