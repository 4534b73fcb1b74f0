"""The headline: a few metrics per engine with their intervals, as rows, markdown or text.

Shared by the HTML report, the Dagster materialization metadata and the ``make demo``
summary, so all three show the same numbers formatted the same way.
"""

from __future__ import annotations

from typing import Any

from citeaudit.metrics.definitions import BY_NAME

HEADLINE = (
    "existence_rate",
    "dead_rate",
    "full_support_rate",
    "citation_recall",
    "verification_coverage",
    "omission_rate",
    "fail_closed_rejection_rate",
    "cost_per_served_answer",
)
SHORT = {
    "existence_rate": "page exists (L1)",
    "dead_rate": "page dead (L1) ↓",
    "full_support_rate": "fully supported",
    "citation_recall": "claims backed by their citations",
    "verification_coverage": "claims needing a source that cite one",
    "omission_rate": "undisclosed ties ↓",
    "fail_closed_rejection_rate": "answers rejected by citation checks ↓",
    "cost_per_served_answer": "tokens per served answer ↓",
}


def fmt_value(metric: str, value: float | None) -> str:
    """A rate as a percentage with one decimal, a mean as a whole number; '—' when none."""
    if value is None:
        return "—"
    if BY_NAME[metric].kind == "mean":
        return f"{value:,.0f}"
    return f"{100 * value:.1f}%"


def fmt_cell(row: dict[str, Any] | None) -> str:
    """``82.0% [74.1–88.0] n=120 u=3`` for a metrics row; the reason when there is no rate."""
    if row is None:
        return "no units"
    if row.get("reason") == "input_missing":
        return "input missing"
    if row.get("estimate") is None:
        if BY_NAME[row["metric"]].kind == "mean":
            return f"no cost recorded (u={row.get('unresolved') or 0})"
        return f"no rate (n=0, u={row.get('unresolved') or 0})"
    m = row["metric"]
    low, high = row.get("ci_low"), row.get("ci_high")
    ci = (
        f" [{fmt_value(m, low).rstrip('%')}–{fmt_value(m, high)}]"
        if low is not None and high is not None
        else " [no interval]"
    )
    n = "" if row.get("denominator") is None else f" n={row['denominator']}"
    return f"{fmt_value(m, row['estimate'])}{ci}{n} u={row['unresolved']}"


def index_rows(rows: list[dict[str, Any]]) -> dict[tuple[str, str, str, str, str], dict]:
    """Metrics rows by (metric, margin, engine, domain, risk_band)."""
    return {
        (r["metric"], r["margin"], r["engine"], r["domain"], r["risk_band"]): r for r in rows
    }


def headline_rows(rows: list[dict[str, Any]]) -> list[tuple[str, list[tuple[str, dict | None]]]]:
    """[(engine label, [(metric, row or None)])] for every engine, then 'all engines'.

    A metric whose input is missing has one overall ``input_missing`` row; every engine's
    cell shows it, so the reader sees why there is no number.
    """
    idx = index_rows(rows)
    engines = sorted({r["engine"] for r in rows if r["margin"] == "engine"})
    out = []
    for engine in [*engines, "all"]:
        level = "overall" if engine == "all" else "engine"
        cells = []
        for m in HEADLINE:
            row = idx.get((m, level, engine, "all", "all"))
            if row is None:
                overall = idx.get((m, "overall", "all", "all", "all"))
                if overall and overall.get("reason") == "input_missing":
                    row = overall
            cells.append((m, row))
        out.append(("all engines" if engine == "all" else engine, cells))
    return out


def headline(rows: list[dict[str, Any]]) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """(metric columns, [(engine, formatted cells)]) for every engine plus 'all engines'."""
    table = [(engine, [fmt_cell(r) for _, r in cells]) for engine, cells in headline_rows(rows)]
    return list(HEADLINE), table


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(rows: list[dict[str, Any]], title: str = "") -> str:
    """The headline as a markdown table (cells escaped), with a one-line legend."""
    metrics, table = headline(rows)
    lines = [f"**{_md_cell(title)}**", ""] if title else []
    lines.append("| engine | " + " | ".join(SHORT[m] for m in metrics) + " |")
    lines.append("|---" * (len(metrics) + 1) + "|")
    for engine, cells in table:
        lines.append(f"| {_md_cell(engine)} | " + " | ".join(_md_cell(c) for c in cells) + " |")
    lines += ["", "estimate [95% interval] n = resolved units in the denominator, "
                  "u = unresolved units reported beside (never inside) the rate; "
                  "↓ = lower is better."]
    return "\n".join(lines)


def period_cells(trend: list[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    """(dates, one pooled row per headline metric) over every date of ``trend`` (the overall
    rows): numerators, denominators and unresolved summed over the dates, the rate their
    ratio (unweighted: the daily rows may be design-weighted, their pooled counts are not)."""
    rows = [t for t in trend if t["margin"] == "overall" and t["metric"] in HEADLINE]
    dates = sorted({t["observation_date"] for t in rows})
    out = []
    for metric in HEADLINE:
        mine = [t for t in rows if t["metric"] == metric and t.get("reason") != "input_missing"]
        num = sum(t.get("numerator") or 0 for t in mine)
        den = sum(t.get("denominator") or 0 for t in mine)
        unresolved = sum(t.get("unresolved") or 0 for t in mine)
        out.append({"metric": metric, "margin": "overall", "numerator": num,
                    "denominator": den, "unresolved": unresolved,
                    "estimate": num / den if den else None,
                    "dates": len({t["observation_date"] for t in mine})})
    return dates, out


def fmt_period(cell: dict[str, Any]) -> str:
    """``12.5% n=120 u=3`` for a pooled row; no interval (the dates are not independent
    samples of one design)."""
    if not cell["dates"]:
        return "no dates"
    if cell["estimate"] is None:
        if BY_NAME[cell["metric"]].kind == "mean":
            return f"no cost recorded (u={cell['unresolved']})"
        return f"no rate (n=0, u={cell['unresolved']})"
    return f"{fmt_value(cell['metric'], cell['estimate'])} n={cell['denominator']} " \
           f"u={cell['unresolved']}"
