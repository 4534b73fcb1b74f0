"""The Dagster code location: merges the assets, jobs and resources defined elsewhere.

Every module of the ``assets`` package is loaded, so a new stage is one new module there; a
module's assets form the Dagster group of the module's name (``assets/support.py``: group
``support``), set here once for all of them.
"""

from __future__ import annotations

import importlib
import pkgutil

import dagster as dg

import assets
from assets.catalog import TABLE_SCHEMA, depends_on_tables
from citeaudit import catalog
from pipelines.distributed import executor_def as configured_executor
from pipelines.jobs import JOBS
from pipelines.resources import PathsResource, paths_from_env, registries_from_env
from pipelines.schedules import SCHEDULES
from pipelines.sensors import SENSORS


def column_schema(spec: dg.AssetSpec) -> dg.AssetSpec:
    """The asset with its columns and their descriptions from the data dictionary
    (``docs/tables.md``, the same text as the catalog's COMMENT ON), shown in the UI."""
    doc = catalog.dictionary().get(spec.key.to_user_string())
    if doc is None:
        return spec
    columns = [dg.TableColumn(name, kind or "unknown", description=text)
               for name, (kind, text) in doc.columns.items()]
    return spec.merge_attributes(metadata={TABLE_SCHEMA: dg.TableSchema(columns)})


def grouped_assets() -> list[dg.AssetsDefinition]:
    """The assets of every public module of the ``assets`` package, each in the group named
    after its module (private modules, ``_metadata``, hold helpers only)."""
    loaded: list[dg.AssetsDefinition] = []
    for module in pkgutil.iter_modules(assets.__path__):
        if not module.name.startswith("_"):
            stage = importlib.import_module(f"{assets.__name__}.{module.name}")
            loaded += dg.load_assets_from_modules([stage], group_name=module.name)
    return loaded


def build_defs(
    paths: PathsResource,
    executor: dg.ExecutorDefinition | None = None,
    **resources: dg.ConfigurableResource,
) -> dg.Definitions:
    """The project's definitions bound to one raw/derived folder pair (``resources`` replace
    the defaults, e.g. ``crossref=CrossrefResource(base_url=...)``). ``executor`` runs the
    daily and judged jobs' steps (default in-process; ``pipelines.distributed`` for Celery)."""
    return dg.Definitions(
        assets=depends_on_tables(dg.map_asset_specs(column_schema, grouped_assets())),
        asset_checks=dg.load_asset_checks_from_package_module(assets),
        jobs=list(JOBS),
        schedules=list(SCHEDULES),
        sensors=list(SENSORS),
        resources={"paths": paths, **registries_from_env(), **resources},
        executor=executor or dg.in_process_executor,
    )


defs = build_defs(paths_from_env(), executor=configured_executor())
