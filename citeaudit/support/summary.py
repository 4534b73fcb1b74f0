"""The support block of the run summary: labels, queue and agreement per codebook version."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from citeaudit import duck
from citeaudit.catalog import connect as open_catalog
from citeaudit.safe_text import safe

NEEDED = ("support_judgments", "rejected_annotations", "support_labels", "annotation_agreement")
COLUMNS = ("judgments", "rejected", "items", "fully_supported", "partially_supported",
           "unsupported", "contradicted", "unresolved", "ties", "queued", "alpha_by_date")


def collect(derived: Path, con=None) -> list[dict]:  # con: duckdb.DuckDBPyConnection
    """One row per codebook, or [] when the support assets are not in the catalog. ``con``:
    a catalog connection whose views the caller narrowed (the run summary of one date);
    default the whole catalog, opened and closed here."""
    own = con is None
    con = open_catalog(derived) if own else con
    try:
        views = {r[0] for r in con.sql("SELECT view_name FROM duckdb_views()").fetchall()}
        if not set(NEEDED) <= views:
            return []
        return duck.query(con, "support/summarize_support_by_codebook").to_pylist()
    finally:
        if own:
            con.close()


def render(derived: Path, console: Console, con=None) -> list[dict]:
    """Print the table (nothing when there are no support judgments); return its rows
    (``con`` as for ``collect``)."""
    rows = collect(derived, con)
    if not rows:
        return rows
    table = Table(title="support judgments by codebook (adjudicated per claim-citation pair)",
                  title_justify="left")
    table.add_column("")
    for r in rows:
        table.add_column(safe(r["codebook"]), justify="right")
    for col in COLUMNS:
        table.add_row(col.replace("_", " "), *(safe(r[col]) if r[col] is not None else "n/a"
                                               for r in rows))
    console.print(table)
    return rows
