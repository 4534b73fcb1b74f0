"""The short run summary: volumes, rejections, verdicts and cost per served answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from citeaudit import duck
from citeaudit.catalog import CATALOG_FILE
from citeaudit.catalog import connect as open_catalog
from citeaudit.report import rejections
from citeaudit.report import terminal as report_terminal
from citeaudit.safe_text import safe


def open_dated(derived: Path, date: str | None = None):  # -> duckdb.DuckDBPyConnection
    """The catalog opened read-only; with ``date``, every view that has an observation_date
    shadowed by its rows of that date (a temporary view of the same name), so the same
    queries summarize one day."""
    con = open_catalog(derived)
    if date is None:
        return con
    names = [r[0] for r in con.sql(
        "SELECT DISTINCT table_name FROM duckdb_columns() WHERE column_name = "
        "'observation_date' AND NOT internal").fetchall()]
    for name in names:
        rows = con.sql(f'SELECT * FROM "{name}" WHERE observation_date = $date::DATE',
                       params={"date": date}).to_arrow_table()
        con.register(name, rows)
    return con


def collect(derived: Path, date: str | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(summary row, citation-check reasons) read from the catalog, opened read-only, over
    every date or one; the row's ``inputs_not_read`` lists every rejected or unread input by
    reason."""
    con = open_dated(derived, date)
    try:
        row = duck.query(con, "report/summarize_run").to_pylist()[0]
        reasons = duck.query(con, "report/count_rejections_by_reason").to_pylist()
        row["inputs_not_read"] = rejections.count(con)
    finally:
        con.close()
    served = row["verified_answers"]
    # an answer without a recorded cost is not a zero-token answer: only costed ones count
    costed = served - (row["served_without_cost"] or 0)
    row["tokens_per_served_answer"] = row["tokens_served"] / costed if costed else None
    row["all_tokens_per_served_answer"] = (row["tokens_all"] / costed
                                           if costed and row["tokens_all"] else None)
    return row, reasons


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:,.1f}"
    # a string comes from the data (an engine, a codebook, a reason): shown as written
    return f"{value:,}" if isinstance(value, int) else safe(value)


def render(derived: Path, console: Console | None = None,
           date: str | None = None) -> dict[str, Any]:
    """Print the summary (of every date, or of ``date``) and where to look next; return the
    summary row."""
    console = console or Console()
    row, reasons = collect(derived, date)
    title = "citeaudit run summary" + (f" · {date}" if date else "")
    table = Table(title=title, show_header=False, title_justify="left")
    table.add_column("what")
    table.add_column("value", justify="right")
    answers_total = (row["verified_answers"] + row["rejected_answers"]
                     + row["unresolved_answers"])
    lines = [
        ("observation dates", row["dates"]),
        ("answers accepted", row["answers"]),
        ("claims", row["claims"]),
        ("citations", row["citations"]),
        ("captures indexed (WARC/ARC records)", row["captures"]),
        ("  of which unreadable/truncated", row["captures_with_error"]),
        (
            "input lines rejected (defects)",
            f"{row['rejected_lines']:,} ({row['rejected_defects']:,})",
        ),
        ("answers verified (served)", f"{row['verified_answers']:,} of {answers_total:,}"),
        ("answers rejected by citation checks", row["rejected_answers"]),
        ("answers unresolved (uncited sentences of unknown worthiness)",
         row["unresolved_answers"]),
        ("tokens per served answer (served answers only)", row["tokens_per_served_answer"]),
        ("all tokens spent per served answer", row["all_tokens_per_served_answer"]),
    ]
    for what, value in lines:
        if value is None and what.startswith(("tokens", "all tokens")):
            table.add_row(what, "no cost recorded")
            continue
        table.add_row(what, _fmt(value))
    console.print(table)
    if reasons:
        why = Table(title="answers not verified by the citation checks", title_justify="left")
        why.add_column("verdict")
        why.add_column("reason")
        why.add_column("n", justify="right")
        for r in reasons:
            why.add_row(_fmt(r["stage"]), _fmt(r["reason"]), _fmt(r["n"]))
        console.print(why)
    render_inputs_not_read(row["inputs_not_read"], console)
    from citeaudit.support import summary

    # with --date, the support block counts that date too (its views narrowed to the date)
    con = open_dated(derived, date)
    try:
        summary.render(derived, console, con)
    finally:
        con.close()
    _render_support_levels(derived, console, date)
    _render_metadata(derived, console, date)
    _render_fetch(derived, console, date)
    catalog = derived / CATALOG_FILE
    footer = [
        f"\nOutputs: parquet under {safe(derived)}/<asset>/, catalog {safe(catalog)}",
        "Look further:",
        "  make ui      # the Dagster UI (dagster dev) on this instance",
        f'  duckdb {safe(catalog)} -c "SELECT engine, reason, count(*) FROM answer_checks '
        'GROUP BY ALL ORDER BY ALL"',
    ]
    for line in footer:
        console.print(line, soft_wrap=True, highlight=False)
    report_terminal.render(derived, console, date)  # last: report paths and headline
    return row


def render_inputs_not_read(rows: list[dict[str, Any]], console: Console) -> None:
    """Every rejected or unread input by reason, with its first example; a line saying so
    when there is none (an empty table would read as "not checked")."""
    if not rows:
        console.print("inputs not read: none (every line, label, record and file was read)")
        return
    table = Table(title="inputs not read, by reason (first example; all rows in the "
                        "rejected_* tables and ignored_inputs)", title_justify="left")
    table.add_column("input")
    table.add_column("reason")
    table.add_column("n", justify="right")
    table.add_column("first example", overflow="fold")
    for r in rows:
        table.add_row(r["input"], r["reason"], _fmt(r["n"]), r["example"])
    console.print(table)


def _render_fetch(derived: Path, console: Console, date: str | None = None) -> None:
    """The live crawl's outcomes (fetch_log), when some date was archived live."""
    con = open_dated(derived, date)
    try:
        views = {r[0] for r in con.sql("SELECT view_name FROM duckdb_views()").fetchall()}
        rows = (duck.query(con, "archive/count_fetch_outcomes").to_pylist()
                if "fetch_log" in views else [])
    finally:
        con.close()
    if not rows:
        return
    table = Table(title="live fetches (fetch_log)", title_justify="left")
    for name in ("date", "requests", "outcome"):
        table.add_column(name)
    table.add_column("n", justify="right")
    table.add_column("bytes", justify="right")
    for r in rows:
        table.add_row(_fmt(str(r["observation_date"])), _fmt(r["requests"]), _fmt(r["outcome"]),
                      _fmt(r["n"]),
                      _fmt(r["bytes"]))
    console.print(table)


SUPPORT_LEVEL_COLUMNS = ("codebook", "judged", "items", "fully_supported",
                         "partially_supported", "unsupported", "contradicted", "unresolved")


def _render_support_levels(derived: Path, console: Console,
                           date: str | None = None) -> list[dict[str, Any]]:
    """Which support items are claim-citation pairs and which whole statements, per
    codebook (the support block above counts both); nothing when there are none."""
    con = open_dated(derived, date)
    try:
        views = {r[0] for r in con.sql("SELECT view_name FROM duckdb_views()").fetchall()}
        rows = (duck.query(con, "report/count_support_by_grain").to_pylist()
                if "support_labels" in views else [])
    finally:
        con.close()
    if rows:
        t = Table(title="support items: claim-citation pairs vs statements judged as a whole",
                  title_justify="left")
        for col in SUPPORT_LEVEL_COLUMNS:
            t.add_column(col.replace("_", " "),
                         justify="left" if col in ("codebook", "judged") else "right")
        for r in rows:
            t.add_row(*(_fmt(r[c]) for c in SUPPORT_LEVEL_COLUMNS))
        console.print(t)
    return rows


def _render_metadata(derived: Path, console: Console, date: str | None = None) -> None:
    """L3 metadata verdicts per codebook, when the run produced metadata_checks."""
    con = open_dated(derived, date)
    try:
        views = {r[0] for r in con.sql("SELECT view_name FROM duckdb_views()").fetchall()}
        rows = (duck.query(con, "report/count_metadata_verdicts").to_pylist()
                if "metadata_checks" in views else [])
    finally:
        con.close()
    if rows:
        t = Table(title="L3 scholarly metadata (citations)", title_justify="left")
        for col in ("codebook", "verdict", "citations", "retracted", "registries_disagree"):
            t.add_column(col, justify="right" if col not in ("codebook", "verdict") else "left")
        for r in rows:
            t.add_row(*(_fmt(r[c]) for c in ("codebook", "verdict", "citations", "retracted",
                                             "registries_disagree")))
        console.print(t)
