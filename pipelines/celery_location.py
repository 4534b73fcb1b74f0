"""The code location with the Celery executor: what ``citeaudit run --executor celery`` points
its workers at (``pipelines.distributed.recon_job``). The same definitions as
``pipelines.definitions``, with the daily and judged jobs' steps sent to Celery workers.
Paths come from each run's config (``resources.paths``), so one pool of workers serves any
raw/derived pair.
"""

from __future__ import annotations

from pipelines.definitions import build_defs
from pipelines.distributed import celery_executor_def
from pipelines.resources import paths_from_env

defs = build_defs(paths_from_env(), executor=celery_executor_def())
