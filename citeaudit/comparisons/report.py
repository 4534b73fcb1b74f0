"""What the report's "What changed" section shows (``report/templates/_changes.html.j2``):
the alerts and significant differences first, each with its interval drawn around zero and
its n, then the engine-vs-engine panel on the same queries and a compact table of every
comparison. Read from the ``comparisons`` and ``alerts`` partitions; None when this date ×
codebook has no comparisons (the report then has no such section)."""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from citeaudit import parquet_io
from citeaudit.metrics.definitions import BY_NAME

WIDTH, HEIGHT, PAD = 260, 26, 8


def _fmt(v: float | None, rate: bool) -> str:
    if v is None:
        return "—"
    return f"{100 * v:+.1f} pp" if rate else f"{v:+,.0f}"


def difference_svg(row: dict[str, Any], scale: float) -> str:
    """A one-line plot: the difference, its 95% interval and zero, on ±``scale``."""
    def x(v: float) -> float:
        return PAD + (WIDTH - 2 * PAD) * (0.5 + 0.5 * max(-1.0, min(1.0, v / scale)))

    lo, hi, d = row["ci_low"], row["ci_high"], row["difference"]
    colour = "#b34700" if row.get("worse") else "#1f5fa8"
    label = escape(f"difference {d:+.4f}, 95% interval [{lo:+.4f}, {hi:+.4f}]")
    return (f'<svg class="plot" role="img" aria-label="{label}" width="{WIDTH}" '
            f'height="{HEIGHT}" '
            f'viewBox="0 0 {WIDTH} {HEIGHT}" xmlns="http://www.w3.org/2000/svg">'
            f"<title>{label}</title>"
            f'<line x1="{x(0):.1f}" y1="2" x2="{x(0):.1f}" y2="{HEIGHT - 2}" stroke="#999" '
            'stroke-dasharray="3,2"/>'
            f'<line class="mark" x1="{x(lo):.1f}" y1="{HEIGHT / 2}" x2="{x(hi):.1f}" '
            f'y2="{HEIGHT / 2}" stroke="{colour}" stroke-width="3"/>'
            f'<circle class="mark" cx="{x(d):.1f}" cy="{HEIGHT / 2}" r="4.5" '
            f'fill="{colour}"/></svg>')


def _describe(r: dict[str, Any]) -> str:
    if r["family"] == "engine_vs_engine":
        return f"{r['engine_a']} vs {r['engine_b']}"
    if r["family"] == "vs_codebook":
        return f"{r['engine_a']}: codebook {r['codebook_a']} vs {r['codebook_b']}"
    if r["family"] == "vs_version":
        return (f"{r['engine_a']}: version {r['version_a']} ({r['period_a']}) vs "
                f"{r['version_b']} ({r['period_b']})")
    if r["family"] == "vs_baseline":
        return f"{r['engine_a']}: {r['period_a']} vs baseline {r['period_b']}"
    return f"{r['engine_a']}: {r['period_a']} vs {r['period_b']}"


def _row(r: dict[str, Any]) -> dict[str, Any]:
    m = BY_NAME[r["metric"]]
    rate = m.kind == "rate"
    worse = r["difference"] is not None and (
        r["difference"] < 0 if m.higher_is_better else r["difference"] > 0)
    return {**r, "title": m.title, "what": _describe(r), "worse": worse,
            "diff_text": _fmt(r["difference"], rate),
            # below the floor of evidence: the difference, untested, and why
            "ci_text": (f"[{_fmt(r['ci_low'], rate)}, {_fmt(r['ci_high'], rate)}]"
                        if r["ci_low"] is not None else
                        f"(no interval: {r['reason']})" if r.get("reason") else ""),
            "a_text": "—" if r["estimate_a"] is None else
            (f"{100 * r['estimate_a']:.1f}%" if rate else f"{r['estimate_a']:,.0f}"),
            "b_text": "—" if r["estimate_b"] is None else
            (f"{100 * r['estimate_b']:.1f}%" if rate else f"{r['estimate_b']:,.0f}")}


def context(derived: Path, date: str, version: str) -> dict[str, Any] | None:
    """The template's data: ``alerts``, ``significant`` (with ``svg``), ``engines`` (the
    engine-vs-engine rows) and ``rows`` (every comparison); None without comparisons."""
    part = {"observation_date": date, "codebook": version}
    table = parquet_io.read_optional(derived, "comparisons", part)
    if table is None or table.num_rows == 0:
        return None
    fired = parquet_io.read_optional(derived, "alerts", part)
    rows = [_row(r) for r in table.to_pylist()]
    significant = sorted((r for r in rows if r["significant"]),
                         key=lambda r: (r["p_adjusted"], r["family"], r["metric"]))
    for r in significant:
        rate = BY_NAME[r["metric"]].kind == "rate"
        span = max(abs(r["ci_low"]), abs(r["ci_high"]), 1e-9)
        r["svg"] = difference_svg(r, span * 1.1 if not rate else max(0.1, span * 1.1))
    return {
        "alerts": fired.to_pylist() if fired is not None else [],
        "significant": significant,
        "engines": [r for r in rows if r["family"] == "engine_vs_engine"],
        "rows": rows,
        "n_rows": len(rows),
    }


def baseline_bands(derived: Path, date: str, version: str) -> dict[str, dict[str, Any]]:
    """{metric: band} for the trend plots: all engines' ``vs_baseline`` row of this date,
    drawn as the range of values today's estimate could take with no change from the baseline
    window: ``estimate_b`` widened by the interval of the difference, ``[estimate_b −
    (ci_high − difference), estimate_b + (difference − ci_low)]``. Today's point lies outside
    the band exactly when the difference's interval excludes 0 (before Holm's adjustment).
    Rows below the floor of evidence, or unresolved, have no band."""
    table = parquet_io.read_optional(derived, "comparisons",
                                     {"observation_date": date, "codebook": version})
    if table is None:
        return {}
    bands = {}
    for r in table.to_pylist():
        if (r["family"] == "vs_baseline" and r["engine_a"] == "all"
                and r["verdict"] == "estimated" and r["ci_low"] is not None):
            first, _, last = r["period_b"].partition("..")
            bands[r["metric"]] = {
                "low": r["estimate_b"] - (r["ci_high"] - r["difference"]),
                "high": r["estimate_b"] + (r["difference"] - r["ci_low"]),
                "level": r["estimate_b"], "dates": (first, date),
                "label": f"baseline {r['period_b']}"}
    return bands
