"""The in-memory path to the intervals' inputs, kept as the reference for the DuckDB path.

Every metric's units become one Arrow table in Python, DuckDB counts them with
``count(DISTINCT ...)`` (``count_metric_strata_in_memory.sql``, beside this file), and the
resolved units go to a pandas frame whose ``groupby`` indices say which units each row reads.
Memory grows with the units (a few hundred bytes each); :func:`citeaudit.metrics.compute.compute`
keeps the units in DuckDB instead. Both give the same arrays in the same order to the same
interval code, so the tables are equal: ``tests/metrics`` checks it
(``compute_partition(..., units=counts_and_units)``) and ``benchmarks/bench_metrics.py``
measures both. It lives with the tests because only they and the benchmark run it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from citeaudit.metrics.units import GROUP_KEYS, UNIT_SCHEMA, Units, sorted_units

COUNTS_SQL = Path(__file__).with_name("count_metric_strata_in_memory.sql")
FRAME_COLUMNS = ["metric", "engine", "domain", "risk_band", "query_id", "inclusion_prob", "y"]


class FrameUnits:
    """The resolved units as arrays, found per row through pandas ``groupby`` indices."""

    def __init__(self, df: pd.DataFrame) -> None:
        ip = df["inclusion_prob"].to_numpy(dtype=np.float64, na_value=np.nan)
        self.arrays = Units(
            df["y"].to_numpy(dtype=np.float64),
            np.where(np.isnan(ip), np.nan, 1.0 / ip),
            pd.factorize(df["query_id"], use_na_sentinel=False)[0],
            pd.factorize(df["domain"], use_na_sentinel=False)[0],
        )
        self.groups = {level: df.groupby(keys, dropna=False, sort=False).indices
                       for level, keys in GROUP_KEYS.items()}

    def indices(self, level: str, row: dict[str, Any]) -> np.ndarray | None:
        key = tuple(row[k] for k in GROUP_KEYS[level])
        idx = self.groups[level].get(key)
        if idx is None and len(key) == 1:
            idx = self.groups[level].get(key[0])
        return idx

    def count(self, level: str, row: dict[str, Any], what: str) -> int:
        """The distinct count the counts query gave the row."""
        return row[what]


def counts_and_units(con: duckdb.DuckDBPyConnection, names: set[str]
                     ) -> tuple[list[dict[str, Any]], dict[str, list[str]], FrameUnits]:
    """(counts rows, {metric: missing inputs}, resolved units) of the registered views."""
    relations, missing = sorted_units(con, names)
    parts = [units.to_arrow_table().cast(UNIT_SCHEMA) for units in relations]
    units = pa.concat_tables(parts) if parts else UNIT_SCHEMA.empty_table()
    con.register("metric_units", units)
    try:
        counts = con.sql(COUNTS_SQL.read_text(encoding="utf-8")).to_arrow_table().to_pylist()
    finally:
        con.unregister("metric_units")
    y = units.column("y")
    resolved = pc.and_kleene(pc.is_valid(y), pc.invert(pc.is_nan(y)))
    df = units.filter(resolved).select(FRAME_COLUMNS).to_pandas()
    return counts, missing, FrameUnits(df)
