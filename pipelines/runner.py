"""In-process runs of the pipeline over every date a raw folder holds (``citeaudit run``).

One ``materialize`` call per date runs every date-partitioned asset for that date in this
process (the multiprocess executor costs seconds per step here), recorded in the Dagster
instance under DAGSTER_HOME so ``dagster dev`` shows the runs; then the catalog is rebuilt.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import dagster as dg

from assets import answers, archive, catalog, citations
from citeaudit.layout import codebook_versions
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
    resources = {"paths": PathsResource(raw_dir=str(raw), derived_dir=str(derived))}
    failed: list[str] = []
    with dg.DagsterInstance.get() as instance:
        versions = codebook_versions(raw)
        known = set(instance.get_dynamic_partitions(codebook.name))
        new = [v for v in versions if v not in known]
        if new:
            instance.add_dynamic_partitions(codebook.name, new)
        for date in dates:
            result = dg.materialize(
                DAILY_ASSETS,
                partition_key=date,
                instance=instance,
                resources=resources,
                raise_on_error=False,
                run_config=run_config,
                tags={"citeaudit/trigger": "citeaudit run"},
            )
            if not result.success:
                failed.append(date)
            if on_date:
                on_date(date, result.success)
        dg.materialize(
            [catalog.catalog],
            instance=instance,
            resources=resources,
            run_config=run_config,
            raise_on_error=True,
        )
    return failed
