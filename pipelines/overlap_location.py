"""The code location whose daily and judged jobs run their steps in two processes side by side
(Dagster's multiprocess executor, at most two steps at once): what ``citeaudit run --executor
multiprocess`` (and ``auto`` for a large night) points its step processes at
(``pipelines.overlap.recon_job``). The same definitions as ``pipelines.definitions``; paths come
from each run's config (``resources.paths``), so one location serves any raw/derived pair.
"""

from __future__ import annotations

from pipelines.definitions import build_defs
from pipelines.overlap import multiprocess_executor_def
from pipelines.resources import paths_from_env

defs = build_defs(paths_from_env(), executor=multiprocess_executor_def())
