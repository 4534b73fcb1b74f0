"""DuckDB helpers: offline connections and the project's SQL files.

Every SQL statement the pipeline runs lives in ``sql/<stage>/<verb_object>.sql`` (one statement,
header comment first); an installed wheel carries the folder as ``citeaudit/sql``
(:func:`citeaudit.project_file`). Values are bound as DuckDB parameters (``$name``), never
formatted into the text, so a file can be read, linted and run by hand exactly as the pipeline
runs it.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from citeaudit import project_file, storage

# No network here or in production batch runs: never try to download an extension.
OFFLINE_CONFIG = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}


def connect(
    database: str | Path = ":memory:", *, read_only: bool = False
) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection that never reaches the network and computes in UTC.

    When this process works on an object-storage root, the s3fs filesystem is registered on
    the connection, so SQL files read ``s3://`` parquet exactly as they read local paths.
    """
    con = duckdb.connect(str(database), read_only=read_only, config=dict(OFFLINE_CONFIG))
    con.execute("SET TimeZone = 'UTC'")
    storage.register_duckdb(con)
    return con


@cache
def sql_text(name: str) -> str:
    """The text of ``sql/<name>.sql`` (e.g. ``citations/check_claims``), from the checkout or
    the installed package."""
    path = project_file("citeaudit.sql", "sql", f"{name}.sql")
    if not path.is_file():
        raise FileNotFoundError(f"no SQL file {path}")
    return path.read_text(encoding="utf-8")


def query(
    con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any] | None = None
) -> pa.Table:
    """Run one project SQL file and return its whole result as an Arrow table.

    The result is drained here: an undrained DuckDB result would block the next query.
    """
    text = sql_text(name)
    used = {k: v for k, v in (params or {}).items() if f"${k}" in text}
    return con.sql(text, params=used or None).to_arrow_table()


def create_table(
    con: duckdb.DuckDBPyConnection, table: str, name: str, params: dict[str, Any] | None = None
) -> None:
    """Materialize a SQL file's result as a temporary table inside DuckDB (stays native JSON)."""
    text = sql_text(name)
    used = {k: v for k, v in (params or {}).items() if f"${k}" in text}
    con.sql(text, params=used or None).to_table(table)


def execute(
    con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any] | None = None
) -> None:
    """Run a SQL file that changes state (CREATE, INSERT) and returns no rows worth keeping."""
    text = sql_text(name)
    used = {k: v for k, v in (params or {}).items() if f"${k}" in text}
    con.execute(text, used or None)


def spill_to_disk(con: duckdb.DuckDBPyConnection, memory_limit: str, folder: str | Path) -> None:
    """Keep ``con`` within ``memory_limit`` (e.g. ``"300MB"``): joins, sorts and aggregates
    beyond it spill to temporary files in ``folder`` (a private folder the caller removes).
    Insertion order stays preserved, so a spilled result comes back in the same order as an
    in-memory one and the files written from it keep the same bytes."""
    con.execute("SET memory_limit = $m", {"m": memory_limit})
    con.execute("SET temp_directory = $d", {"d": str(folder)})
    con.execute("SET preserve_insertion_order = true")
