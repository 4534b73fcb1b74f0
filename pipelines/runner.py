"""In-process runs of the pipeline over every date a raw folder holds (``citeaudit run``).

One run of the ``daily_audit`` job per date executes every date-partitioned asset for that date
in this process (the multiprocess executor costs seconds per step here), recorded in the Dagster
instance under DAGSTER_HOME so ``dagster dev`` shows the runs; then ``rebuild_catalog`` runs.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import dagster as dg

from assets import answers, archive, catalog, citations
from citeaudit.layout import codebook_versions
from pipelines.jobs import catalog_job, daily_audit
from pipelines.partitions import codebook
from pipelines.resources import PathsResource

PROJECT_ROOT = Path(__file__).resolve().parent.parent

DAILY_ASSETS = [answers.ingest_answers, archive.captures, citations.check_citations]


def ensure_dagster_home() -> Path:
    """DAGSTER_HOME (default ./.dagster_home), created and given the project's dagster.yaml."""
    home = Path(os.environ.get("DAGSTER_HOME") or Path.cwd() / ".dagster_home").resolve()
    home.mkdir(parents=True, exist_ok=True)
    os.environ["DAGSTER_HOME"] = str(home)
    config = home / "dagster.yaml"
    if not config.exists():
        shutil.copyfile(PROJECT_ROOT / "dagster.yaml", config)
    return home


def run_dates(
    raw: Path,
    derived: Path,
    dates: list[str],
    *,
    on_date: Callable[[str, bool], None] | None = None,
    verbose: bool = False,
) -> list[str]:
    """Materialize every daily asset for each date, then the catalog; return the failed dates."""
    ensure_dagster_home()
    run_config = {
        "loggers": {"console": {"config": {"log_level": "DEBUG" if verbose else "ERROR"}}}
    }
    defs = dg.Definitions(
        assets=[*DAILY_ASSETS, catalog.catalog],
        jobs=[daily_audit, catalog_job],
        resources={"paths": PathsResource(raw_dir=str(raw), derived_dir=str(derived))},
    )
    daily, rebuild = defs.resolve_job_def(daily_audit.name), defs.resolve_job_def(catalog_job.name)
    failed: list[str] = []
    with dg.DagsterInstance.get() as instance:
        versions = codebook_versions(raw)
        known = set(instance.get_dynamic_partitions(codebook.name))
        new = [v for v in versions if v not in known]
        if new:
            instance.add_dynamic_partitions(codebook.name, new)
        for date in dates:
            result = daily.execute_in_process(
                partition_key=date,
                instance=instance,
                raise_on_error=False,
                run_config=run_config,
                tags={"citeaudit/trigger": "citeaudit run"},
            )
            if not result.success:
                failed.append(date)
            if on_date:
                on_date(date, result.success)
        rebuild.execute_in_process(instance=instance, run_config=run_config, raise_on_error=True)
    return failed
