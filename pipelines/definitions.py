"""The Dagster code location: merges the assets, jobs and resources defined elsewhere."""

from __future__ import annotations

import dagster as dg

from assets import answers, archive, catalog, citations
from pipelines.jobs import catalog_job, daily_audit
from pipelines.resources import paths_from_env

defs = dg.Definitions(
    assets=dg.load_assets_from_modules([answers, archive, citations, catalog]),
    jobs=[daily_audit, catalog_job],
    resources={"paths": paths_from_env()},
    executor=dg.in_process_executor,
)
