"""DuckDB helpers: offline connections and the project's SQL files.

Every SQL statement the pipeline runs lives in ``sql/<stage>/<verb_object>.sql`` (one statement,
header comment first); an installed wheel carries the folder as ``citeaudit/sql``
(:func:`citeaudit.project_file`). Values are bound as DuckDB parameters (``$name``), never
formatted into the text, so a file can be read, linted and run by hand exactly as the pipeline
runs it.
"""

from __future__ import annotations

import itertools
import os
import threading
import weakref
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
    database: str | Path = ":memory:", *, read_only: bool = False, isolated: bool = False
) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection that never reaches the network and computes in UTC.

    An in-memory connection is a connection to one database instance this process shares,
    working in a private in-memory catalog of its own (its tables, views and registered Arrow
    tables are its own; the catalog is detached once the connection object is gone, so a
    relation or reader must not outlive the connection it came from). Starting a
    DuckDB instance costs about 22 ms here, a private catalog about 1.4 ms, and a run opens a
    hundred connections. ``isolated=True`` gives a database instance of its own instead, as a
    file ``database`` always has: needed by work that changes settings DuckDB keeps per
    instance (``threads``, ``memory_limit``, ``temp_directory``: :func:`spill_to_disk`),
    registers Python functions, attaches files or opens cursors.

    When this process works on an object-storage root, the s3fs filesystem is registered on
    the connection, so SQL files read ``s3://`` parquet exactly as they read local paths.
    """
    if isolated or str(database) != ":memory:":
        con = duckdb.connect(str(database), read_only=read_only, config=dict(OFFLINE_CONFIG))
        storage.register_duckdb(con)
    else:
        con = _private_catalog()
    con.execute("SET TimeZone = 'UTC'")
    return con


class _Shared:
    """This process's shared DuckDB instance, and the private catalogs to detach from it."""

    lock = threading.Lock()
    instance: duckdb.DuckDBPyConnection | None = None
    # the s3fs filesystem registered on the instance: filesystems belong to the instance, not
    # to a cursor, so a changed object-storage configuration replaces it for every cursor
    filesystem: Any = None
    names = itertools.count()
    released: list[str] = []
    cursors: weakref.WeakSet[duckdb.DuckDBPyConnection] = weakref.WeakSet()
    # instances inherited from a parent process: never used nor destroyed in the child (DuckDB
    # would join threads the child does not have)
    inherited: list[duckdb.DuckDBPyConnection] = []


def _private_catalog() -> duckdb.DuckDBPyConnection:
    """A cursor of the shared instance using a new in-memory catalog; the catalogs of cursors
    already garbage collected are detached first (not from the finalizer itself, which may
    run in the middle of another DuckDB call)."""
    with _Shared.lock:
        if _Shared.instance is None:
            _Shared.instance = duckdb.connect(":memory:", config=dict(OFFLINE_CONFIG))
        _use_current_filesystem(_Shared.instance)
        for gone in _Shared.released[:]:
            _Shared.released.remove(gone)
            _Shared.instance.execute(f"DETACH DATABASE IF EXISTS {gone}")
        name = f"private_{next(_Shared.names)}"
        _Shared.instance.execute(f"ATTACH ':memory:' AS {name}")
        con = _Shared.instance.cursor()
    con.execute(f"USE {name}")
    weakref.finalize(con, _Shared.released.append, name)
    _Shared.cursors.add(con)
    return con


def _use_current_filesystem(instance: duckdb.DuckDBPyConnection) -> None:
    """Register on the shared instance the s3fs filesystem of the current environment, in
    place of the one an earlier configuration registered (whose endpoint or credentials may be
    gone), when this process works on object storage. Called with the lock held."""
    wanted = storage.duckdb_filesystem()
    if wanted is None or wanted is _Shared.filesystem:
        return
    if _Shared.filesystem is not None:
        instance.unregister_filesystem("s3")
    instance.register_filesystem(wanted)
    _Shared.filesystem = wanted


def _after_fork_in_child() -> None:
    if _Shared.instance is not None:
        _Shared.inherited.append(_Shared.instance)
    _Shared.instance, _Shared.lock, _Shared.released = None, threading.Lock(), []
    _Shared.filesystem = None
    _Shared.cursors = weakref.WeakSet()


os.register_at_fork(after_in_child=_after_fork_in_child)


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
    if con in _Shared.cursors:
        raise ValueError("spill_to_disk changes settings of the whole DuckDB instance: open the "
                         "connection with duck.connect(isolated=True)")
    con.execute("SET memory_limit = $m", {"m": memory_limit})
    con.execute("SET temp_directory = $d", {"d": str(folder)})
    con.execute("SET preserve_insertion_order = true")
