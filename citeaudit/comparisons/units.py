"""The ``comparison_units`` table: per metric, engine and query, the sums a comparison needs.

The units are the metrics' own: the same SQL files (``citeaudit.metrics`` selects them into
DuckDB's ``metric_units`` exactly as the ``metrics`` asset does), so a comparison's two
estimates are the metrics table's engine rows. They are reduced to one row per query (its
clusters' sums of ``w*y`` and ``w`` over the resolved units, and the unresolved count beside),
which is all a difference of Hájek ratios and its cluster-robust variance need; earlier dates
and other codebooks are compared from these rows, never recomputed. A query's units are split
by the answers' ``system_version`` (null when not given), for the comparison of versions.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import duckdb
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
        ("system_version", pa.string()),
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
        con = duck.connect(isolated=True)  # threads and the spill: instance-wide
        try:
            # one thread: the float sums per query then add in one order, rerun after rerun
            con.execute("SET threads = 1")
            duck.spill_to_disk(con, MEMORY_LIMIT, spill)
            names = inputs.register(con, inputs.local_copies(tables, Path(spill)))
            _answer_versions(con, names)
            select_units(con, names)
            table = duck.query(con, "comparisons/select_query_sums", {"weighted": weighted})
        finally:
            con.close()
    return table.cast(SCHEMA)


def _answer_versions(con: duckdb.DuckDBPyConnection, names: set[str]) -> None:
    """The view ``answer_versions`` (answer_id, system_version): the answers' versions, null
    when the answers carry none (or were written before the column existed)."""
    columns = con.sql("SELECT * FROM answers LIMIT 0").columns if "answers" in names else []
    if "system_version" in columns:
        con.sql("SELECT answer_id, system_version FROM answers").create_view("answer_versions")
    else:
        con.sql("SELECT NULL::VARCHAR AS answer_id, NULL::VARCHAR AS system_version "
                "WHERE false").create_view("answer_versions")


def read(derived: Path, date: str, version: str) -> pa.Table | None:
    """The written ``comparison_units`` of one date × codebook; None when not materialized
    (one written before ``system_version`` existed reads with it null)."""
    table = parquet_io.read_optional(derived, TABLE, {"observation_date": date,
                                                      "codebook": version})
    if table is None:
        return None
    if "system_version" not in table.column_names:
        table = table.append_column("system_version", pa.nulls(table.num_rows, pa.string()))
    return table.select(SCHEMA.names).cast(SCHEMA)
