"""The end of ``make demo``: where the reports are, and the headline per engine with intervals.

Reads the ``metrics`` partitions of the latest observation date (one table per codebook) and
prints them with rich; the numbers are the same as the report's headline.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from citeaudit import parquet_io
from citeaudit.metrics.definitions import BY_NAME
from citeaudit.report import headline as hl
from citeaudit.report.render import INDEX, REPORT
from citeaudit.safe_text import safe

MIN_WIDTH = 120  # the table is unreadable when squeezed into 80 columns of a pipe


def latest_reports(derived: Path, date: str | None = None) -> list[tuple[str, str, Path]]:
    """(date, codebook, index.html) of the latest observation date that has a report (or of
    ``date``)."""
    found = []
    for page in sorted((derived / REPORT).glob(f"observation_date=*/codebook=*/{INDEX}")):
        day = page.parent.parent.name.split("=", 1)[1]
        version = page.parent.name.split("=", 1)[1]
        found.append((day, version, page))
    if not found:
        return []
    last = date or max(d for d, _, _ in found)
    return [f for f in found if f[0] == last]


def _cell(row: dict | None) -> str:
    if row is None:
        return "no units"
    if row.get("reason") == "input_missing":
        return "input missing"
    if row.get("estimate") is None:
        what = "no cost recorded" if BY_NAME[row["metric"]].kind == "mean" else "no rate"
        return f"{what}\nu={row.get('unresolved') or 0}"
    m = row["metric"]
    ci = (f"[{hl.fmt_value(m, row['ci_low']).rstrip('%')}–"
          f"{hl.fmt_value(m, row['ci_high']).rstrip('%')}]"
          if row.get("ci_low") is not None else "[no interval]")
    return (f"{hl.fmt_value(m, row['estimate'])}\n{ci}\n"
            f"n={row['denominator']} u={row['unresolved']}")


def render(derived: Path, console: Console, date: str | None = None) -> list[Path]:
    """Print the report paths and headline tables of the latest date (or of ``date``);
    return the paths."""
    reports = latest_reports(derived, date)
    if not reports:
        return []
    for date, version, page in reports:
        rows = parquet_io.read_table(
            derived / "metrics" / f"observation_date={date}" / f"codebook={version}"
            / "data.parquet"
        ).to_pylist()
        table_rows = hl.headline_rows(rows)
        table = Table(title=f"headline per engine · {safe(date)} · codebook {safe(version)}",
                      caption="estimate, [95% interval], n = resolved units in the "
                              "denominator, u = unresolved units beside it",
                      title_justify="left", caption_justify="left")
        table.add_column("metric", no_wrap=True)
        for engine, _ in table_rows:
            table.add_column(safe(engine), justify="right", no_wrap=True)
        for k, metric in enumerate(hl.HEADLINE):
            table.add_row(hl.SHORT[metric], *(_cell(cells[k][1]) for _, cells in table_rows),
                          end_section=True)
        wide = console if console.width >= MIN_WIDTH else Console(
            file=console.file, width=MIN_WIDTH, force_terminal=console.is_terminal,
            no_color=console.no_color)
        wide.print(table)
        console.print(f"report: {safe(page)}", soft_wrap=True, highlight=False)
    return [p for _, _, p in reports]
