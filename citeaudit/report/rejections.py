"""Every input that was rejected or not read, counted by reason with its first example.

One list for the run summary (over the catalog, every date) and the report (one date ×
codebook): answer and import lines (``rejected_inputs``), support labels
(``rejected_annotations``), source-risk lines (``rejected_records``), files under the raw folder
that are not read (``ignored_inputs``) and archive records that could not be used
(``captures`` with an error). A table that is absent is skipped, never an error: what exists is
always shown, so nothing rejected disappears behind a count of zero.
"""

from __future__ import annotations

from typing import Any

import duckdb

from citeaudit import duck

# (view the query reads, the query): one source of rejections each
SOURCES = (
    ("rejected_inputs", "report/count_rejected_lines"),
    ("rejected_annotations", "report/count_rejected_annotations"),
    ("rejected_records", "report/count_rejected_records"),
    ("ignored_inputs", "report/count_ignored_inputs"),
    ("captures", "report/count_capture_errors"),
)


def views(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The names of the views and tables ``con`` can read."""
    rows = con.sql("SELECT view_name FROM duckdb_views() UNION ALL "
                   "SELECT table_name FROM duckdb_tables()").fetchall()
    return {r[0] for r in rows}


def count(con: duckdb.DuckDBPyConnection, names: set[str] | None = None) -> list[dict[str, Any]]:
    """Rows (input, reason, n, first_file, first_line, first_detail, example) over every source
    whose view exists in ``con`` (or is in ``names``)."""
    names = views(con) if names is None else names
    out: list[dict[str, Any]] = []
    for view, sql in SOURCES:
        if view in names:
            out.extend(duck.query(con, sql).to_pylist())
    for r in out:
        r["example"] = example(r)
    return out


def example(row: dict[str, Any]) -> str:
    """``file:line (detail)`` of a count row's first example."""
    where = row.get("first_file") or ""
    if row.get("first_line") is not None:
        where += f":{row['first_line']}"
    detail = row.get("first_detail")
    return f"{where} ({detail})" if detail else where
