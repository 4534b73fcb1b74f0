"""The ``comparison_units`` table: per metric, engine and query, the sums a comparison needs.

The units are the metrics' own: the same SQL files (``citeaudit.metrics`` selects them into
DuckDB's ``metric_units`` exactly as the ``metrics`` asset does), so a comparison's two
estimates are the metrics table's engine rows. They are reduced to one row per query (its
clusters' sums of ``w*y`` and ``w`` over the resolved units, and the unresolved count beside),
which is all a difference of Hájek ratios and its cluster-robust variance need; earlier dates
and other codebooks are compared from these rows, never recomputed.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pyarrow as pa

from citeaudit import duck, parquet_io
from citeaudit.metrics import inputs
from citeaudit.metrics.compute import MEMORY_LIMIT, select_units
from citeaudit.metrics.definitions import METRICS

TABLE = "comparison_units"

SCHEMA = pa.schema(
    [
        ("metric", pa.string()),
        ("engine", pa.string()),
        ("domain", pa.string()),
        ("query_id", pa.string()),
        ("units", pa.int64()),
        ("resolved", pa.int64()),
        ("unresolved", pa.int64()),
        ("sum_wy", pa.float64()),
        ("sum_w", pa.float64()),
    ]
)


def query_sums(derived: Path, date: str, version: str) -> pa.Table:
    """The ``comparison_units`` rows of one date × codebook, from the inputs on disk (a metric
    whose inputs are absent has no rows: its comparisons say so)."""
    tables = inputs.available(derived, date, version)
    weighted = [m.name for m in METRICS if m.weighted and m.kind != "f1"]
    with tempfile.TemporaryDirectory(prefix="citeaudit-comparisons-") as spill:
        con = duck.connect()
        try:
            # one thread: the float sums per query then add in one order, rerun after rerun
            con.execute("SET threads = 1")
            duck.spill_to_disk(con, MEMORY_LIMIT, spill)
            names = inputs.register(con, tables)
            select_units(con, names)
            table = duck.query(con, "comparisons/select_query_sums", {"weighted": weighted})
        finally:
            con.close()
    return table.cast(SCHEMA)


def read(derived: Path, date: str, version: str) -> pa.Table | None:
    """The written ``comparison_units`` of one date × codebook; None when not materialized."""
    table = parquet_io.read_optional(derived, TABLE, {"observation_date": date,
                                                      "codebook": version})
    return None if table is None else table.select(SCHEMA.names).cast(SCHEMA)
