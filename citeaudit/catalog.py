"""``catalog.duckdb``: one view per derived asset, so an analyst can query at once.

The file is rebuilt under a temporary name and moved into place: an analyst who has the old
catalog open read-only keeps reading it, and nobody ever sees a half-built one. Views read the
parquet files by absolute path, so the catalog works from any working directory.
"""

from __future__ import annotations

import os
from pathlib import Path

from citeaudit import duck, parquet_io

CATALOG_FILE = "catalog.duckdb"


def assets_on_disk(derived: Path) -> dict[str, int]:
    """Asset folders under ``derived`` that hold at least one partition file, with their depth."""
    found: dict[str, int] = {}
    if not derived.is_dir():
        return found
    for folder in sorted(p for p in derived.iterdir() if p.is_dir() and not p.name.startswith(".")):
        for depth in range(0, 4):
            if any(folder.glob("*/" * depth + parquet_io.DATA_FILE)):
                found[folder.name] = depth
                break
    return found


def build(derived: Path) -> Path:
    """Rebuild ``derived/catalog.duckdb`` atomically; return its path."""
    derived.mkdir(parents=True, exist_ok=True)
    final = derived / CATALOG_FILE
    tmp = parquet_io.temp_name(final)
    parquet_io.remove_dead_temps(final)
    for leftover in (tmp, Path(f"{tmp}.wal")):
        leftover.unlink(missing_ok=True)
    con = duck.connect(tmp)
    try:
        for asset, depth in assets_on_disk(derived).items():
            glob = parquet_io.dataset_glob(derived, asset, depth)
            relation = con.read_parquet(glob, hive_partitioning=depth > 0, union_by_name=True)
            relation.create_view(asset)
        con.execute("CHECKPOINT")
    finally:
        con.close()
    os.replace(tmp, final)
    return final
