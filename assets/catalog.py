"""The analyst's entry point: data/derived/catalog.duckdb with one view per asset.

The catalog's upstream assets are not listed here: the code location makes it depend on every
table of the asset graph (:func:`depends_on_tables`), so a new table joins it by itself.
"""

from collections.abc import Sequence

import dagster as dg

from citeaudit import catalog as catalog_lib
from pipelines.resources import PathsResource

# What marks an asset as a table: its column schema (docs/tables.md, the data dictionary).
TABLE_SCHEMA = "dagster/column_schema"


@dg.asset(
    description="data/derived/catalog.duckdb: a view per derived asset over its parquet files.",
)
def catalog(paths: PathsResource) -> dg.MaterializeResult:
    """Rebuild the DuckDB catalog (atomically) over whatever partitions are on disk."""
    path = catalog_lib.build(paths.derived)
    views = sorted(catalog_lib.assets_on_disk(paths.derived))
    return dg.MaterializeResult(
        metadata={
            "path": dg.MetadataValue.path(str(path)),
            "views": dg.MetadataValue.text(", ".join(views)),
        }
    )


def depends_on_tables(defs: Sequence[dg.AssetsDefinition]) -> list[dg.AssetsDefinition]:
    """``defs`` with the catalog depending on every table among them: each asset whose
    partitions are parquet tables, known by its column schema from the data dictionary
    (the report's HTML pages and the catalog itself have none)."""
    tables = sorted({spec.key for d in defs for spec in d.specs if TABLE_SCHEMA in spec.metadata},
                    key=lambda key: key.to_user_string())
    return [d.map_asset_specs(lambda spec: spec.replace_attributes(deps=tables))
            if catalog.key in d.keys else d for d in defs]
