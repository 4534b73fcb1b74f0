"""The support block of the run summary: labels, queue and agreement per codebook version, and
the support rates of drawn review samples (human-only and prediction-powered side by side)."""

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
    render_sample_rates(derived, console)
    return rows


def sample_rates(derived: Path) -> list[dict]:
    """The overall support rates of each drawn review sample (``select_sample_rates.sql``),
    or [] when no sample was drawn (or the metrics are not in the catalog)."""
    con = open_catalog(derived)
    try:
        views = {r[0] for r in con.sql("SELECT view_name FROM duckdb_views()").fetchall()}
        if "metrics" not in views:
            return []
        return duck.query(con, "support/select_sample_rates").to_pylist()
    finally:
        con.close()


def _interval(est: float | None, lo: float | None, hi: float | None) -> str:
    if est is None:
        return "n/a"
    return f"{est:.3f}" + (f" [{lo:.3f}, {hi:.3f}]" if lo is not None and hi is not None else "")


def sample_rate_line(r: dict) -> str:
    """One line: human-only vs PPI, n, N and the width ratio (or why there is no estimate)."""
    head = f"{r['observation_date']} {r['codebook']} {r['metric']}: "
    if r["sample_estimate"] is None and r["ppi_estimate"] is None:
        return head + f"no estimate ({r['ppi_reason']})"
    ratio = "n/a" if r["ppi_width_ratio"] is None else f"{r['ppi_width_ratio']:.2f}"
    lam = "" if r["ppi_lambda"] is None else f", lambda {r['ppi_lambda']:.2f}"
    human = _interval(r["sample_estimate"], r["sample_ci_low"], r["sample_ci_high"])
    ppi = _interval(r["ppi_estimate"], r["ppi_ci_low"], r["ppi_ci_high"])
    return (head + f"human-only {human} n={r['n_human']} | PPI {ppi} N={r['n_graded']} "
            f"(grader {safe(r['ppi_grader'])}{lam}) | width ratio {ratio}")


def render_sample_rates(derived: Path, console: Console) -> list[dict]:
    """Print the review samples' support rates, one line each (nothing when none was drawn:
    the report's support section says how to draw one)."""
    rows = sample_rates(derived)
    if rows:
        console.print("support rates from the review sample (95% CI; PPI = people's labels of "
                      "the sample with the grader's labels of every pair; docs/graders.md):",
                      soft_wrap=True, highlight=False)
        for r in rows:
            console.print("  " + sample_rate_line(r), soft_wrap=True, highlight=False)
    return rows
