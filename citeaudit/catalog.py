"""``catalog.duckdb``: one view per derived asset, so an analyst can query at once.

The file is rebuilt under a temporary name and moved into place: an analyst who has the old
catalog open read-only keeps reading it, and nobody ever sees a half-built one. Views read the
parquet files by absolute path, so the catalog works from any working directory. Every view and
column carries its description from the data dictionary, ``docs/tables.md`` (the one source of
those descriptions: the Dagster column schemas read it too, and a test checks it against the
real schemas).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from citeaudit import duck, parquet_io, project_file, storage

CATALOG_FILE = "catalog.duckdb"
# The data dictionary: docs/tables.md of the checkout, or the copy the wheel carries.
TABLES_DOC = project_file("citeaudit.docs", "docs", "tables.md")
COMMON = "Common columns"


@dataclass(frozen=True)
class TableDoc:
    """One table of the data dictionary: what a row is, and each column's (type, description)."""

    name: str
    description: str
    columns: dict[str, tuple[str, str]] = field(default_factory=dict)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


@cache
def dictionary(path: Path = TABLES_DOC) -> dict[str, TableDoc]:
    """The data dictionary parsed from ``docs/tables.md``: one entry per ``## table`` section
    (``Common columns`` included, with empty types). The file ships with the package, so a
    missing one is an error, not a catalog without comments."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"no data dictionary {path} (docs/tables.md)")
    tables: dict[str, TableDoc] = {}
    current: TableDoc | None = None
    prose: list[str] = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        heading = re.match(r"^## (.+)$", line)
        if heading:
            current = TableDoc(heading.group(1).strip(), "")
            tables[current.name] = current
            prose = []
        elif current is None:
            continue
        elif line.startswith("|"):
            cells = _cells(line)
            if cells[0] in ("column", "") or set(cells[0]) <= {"-"}:
                continue
            kind, text = (cells[1], cells[2]) if len(cells) >= 3 else ("", cells[-1])
            current.columns[cells[0]] = (kind, text)
        elif line.strip() and not current.columns:
            prose.append(line.strip())
            tables[current.name] = TableDoc(current.name, " ".join(prose), current.columns)
            current = tables[current.name]
    return tables


def column_description(table: str, column: str) -> str | None:
    """A column's description: the table's own, else the common one, else None."""
    docs = dictionary()
    own = docs.get(table)
    if own is not None and column in own.columns:
        return own.columns[column][1]
    common = docs.get(COMMON)
    return common.columns[column][1] if common is not None and column in common.columns else None


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def comment_views(con, views: list[str] | dict[str, list[str]]) -> None:
    """``COMMENT ON VIEW`` / ``COMMENT ON COLUMN`` from the data dictionary, in one transaction.

    ``views`` names the views, or maps each to its columns (in order) when the caller has them
    already: otherwise they are read from ``duckdb_columns()`` once, which binds every view (a
    parquet glob each, a listing and a footer read per file on object storage). Asking per view
    made the rebuild quadratic in the number of views. DuckDB's COMMENT ON takes no bound
    parameters, so names and descriptions are quoted as SQL literals and identifiers here
    (quotes doubled); they come from docs/tables.md and the views' own column names, never
    from input data.
    """
    docs = dictionary()
    if isinstance(views, dict):
        columns = [(view, column) for view, names in views.items() for column in names]
        views = list(views)
    else:
        columns = con.execute(
            "SELECT table_name, column_name FROM duckdb_columns() "
            "WHERE list_contains($views, table_name) ORDER BY table_name, column_index",
            {"views": views},
        ).fetchall()
    con.execute("BEGIN TRANSACTION")
    for view in views:
        if view in docs and docs[view].description:
            text = _literal(docs[view].description)
            con.execute(f"COMMENT ON VIEW {_identifier(view)} IS {text}")
    for view, column in columns:
        text = column_description(view, column)
        if text:
            con.execute(
                f"COMMENT ON COLUMN {_identifier(view)}.{_identifier(column)} IS {_literal(text)}"
            )
    con.execute("COMMIT")


def assets_on_disk(derived: Path) -> dict[str, int]:
    """Asset folders under ``derived`` that hold at least one partition file, with their depth
    (the fewest partition folders above a data file), from one listing of the tree (on object
    storage one paginated list, not a glob per folder and depth)."""
    found: dict[str, int] = {}
    if not derived.is_dir():
        return found
    for path in derived.rglob(parquet_io.DATA_FILE):
        parts = path.relative_to(derived).parts
        depth = len(parts) - 2
        if 0 <= depth <= 3 and not parts[0].startswith("."):
            found[parts[0]] = min(depth, found.get(parts[0], depth))
    return dict(sorted(found.items()))


def build(derived: storage.Root) -> storage.Root:
    """Rebuild ``derived/catalog.duckdb`` atomically; return its path.

    For a derived root on object storage the file is built in the root's local state folder
    (``storage.local_state_dir``), kept there as the local working copy, and uploaded as one
    object to ``<derived>/catalog.duckdb``; its views read ``s3://`` globs (open it with
    :func:`connect`, which registers the s3 filesystem)."""
    remote = storage.is_remote(derived)
    local = storage.local_state_dir(derived)
    local.mkdir(parents=True, exist_ok=True)
    final = local / CATALOG_FILE
    tmp = parquet_io.temp_name(final)
    parquet_io.remove_dead_temps(final)
    for leftover in (tmp, Path(f"{tmp}.wal")):
        leftover.unlink(missing_ok=True)
    con = duck.connect(tmp)
    storage.register_duckdb(con, derived)
    try:
        on_disk = assets_on_disk(derived)
        columns: dict[str, list[str]] = {}
        for asset, depth in on_disk.items():
            glob = parquet_io.dataset_glob(derived, asset, depth)
            relation = con.read_parquet(glob, hive_partitioning=depth > 0, union_by_name=True)
            relation.create_view(asset)
            columns[asset] = list(relation.columns)  # bound once, here
        comment_views(con, columns)
        con.execute("CHECKPOINT")
    finally:
        con.close()
    os.replace(tmp, final)
    if not remote:
        return final
    target = derived / CATALOG_FILE
    storage.write_bytes_atomic(target, final.read_bytes())
    return target


def connect(derived: storage.Root):  # -> duckdb.DuckDBPyConnection
    """The catalog of ``derived`` opened read-only, ready to query: for a root on object storage
    a fresh download of the object into the local working copy, with the s3 filesystem
    registered, so its views over ``s3://`` paths resolve."""
    path = derived / CATALOG_FILE
    if storage.is_remote(derived):
        path = storage.local_state_dir(derived) / CATALOG_FILE
        storage.write_bytes_atomic(path, storage.read_bytes(derived / CATALOG_FILE))
    con = duck.connect(path, read_only=True)
    storage.register_duckdb(con, derived)
    return con


def dictionary_problems(real: dict[str, dict[str, str]]) -> list[str]:
    """What ``docs/tables.md`` gets wrong about ``real`` (table → column → DuckDB type): a table
    or column it does not describe, a type that differs, a column or table it describes that
    does not exist. One line each, naming the table and column."""
    docs = dictionary()
    common = docs[COMMON].columns if COMMON in docs else {}
    problems: list[str] = []
    for table, columns in sorted(real.items()):
        doc = docs.get(table)
        if doc is None:
            listed = ", ".join(f"{c} {t}" for c, t in columns.items())
            problems.append(f"table {table} has no '## {table}' section in docs/tables.md "
                            f"(columns: {listed})")
            continue
        for column, kind in columns.items():
            if column in doc.columns:
                if doc.columns[column][0] != kind:
                    problems.append(f"{table}.{column} is {kind}, docs/tables.md says "
                                    f"{doc.columns[column][0]}")
            elif column not in common:
                problems.append(f"{table}.{column} ({kind}) is not described in docs/tables.md")
        for column in doc.columns:
            if column not in columns:
                problems.append(f"docs/tables.md describes {table}.{column}, which {table} "
                                "does not have")
    for table in sorted(set(docs) - set(real) - {COMMON}):
        problems.append(f"docs/tables.md has a section for {table}, which is not on disk")
    return problems
