"""Inline SVG plots for the report: estimates with intervals, stacked breakdowns, trends.

Written by hand (no plotting library, no script, no external file) so the report is one
self-contained page that works offline. Every piece of text that comes from data goes through
:func:`html.escape`; the functions return markup strings that the template inserts as-is.
Each plot is an ``<svg class="plot">`` whose marks carry ``class="mark"`` (the browser test
counts them and checks that they have a size).
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf",
           "#7f7f7f", "#bcbd22", "#e377c2")
CATEGORY_COLOURS = {
    "pass": "#2ca02c", "changed": "#ff7f0e", "dead": "#d62728", "no_existence_row": "#bbbbbb",
    "fully_supported": "#2ca02c", "partially_supported": "#bcbd22", "unsupported": "#ff7f0e",
    "contradicted": "#d62728", "unresolved": "#7f7f7f",
    "PASS": "#2ca02c", "CONTEXTUALIZE": "#1f77b4", "REVIEW": "#ff7f0e", "ABSTAIN": "#d62728",
}
FONT = 'font-family="system-ui, sans-serif" font-size="12"'


def _e(text: object) -> str:
    return escape(str(text), quote=True)


@dataclass(frozen=True)
class IntervalRow:
    """One row of an interval plot: a label, the estimate and bounds (None when absent).

    ``n`` and ``u`` (resolved units in the denominator, unresolved beside) are printed at the
    row's right end; ``detail`` says why a row has no estimate ("no units", "input missing",
    ...) or, with an estimate but no bounds, why it has no interval. ``worse`` marks a metric
    where a higher value is worse (drawn in its own colour).
    """

    label: str
    estimate: float | None
    low: float | None
    high: float | None
    detail: str = ""
    href: str = ""
    emphasis: bool = False
    n: int | None = None
    u: int | None = None
    worse: bool = False


NO_INTERVAL = "no interval (1 cluster)"
BETTER_COLOUR, WORSE_COLOUR = "#0b3d91", "#b34700"
BETTER_CI, WORSE_CI = "#1f77b4", "#e69500"


def _fmt(value: float, percent: bool) -> str:
    return f"{100 * value:.1f}%" if percent else f"{value:,.0f}"


def _counts(r: IntervalRow) -> str:
    """``n=120 u=3`` (either part omitted when unknown)."""
    parts = [f"n={r.n:,}" if r.n is not None else "", f"u={r.u:,}" if r.u is not None else ""]
    return " ".join(p for p in parts if p)


def interval_plot(rows: list[IntervalRow], *, title: str, percent: bool = True,
                  width: int = 640, left: int = 190) -> str:
    """A dot-and-whisker plot: one row per label, the estimate as a dot, the interval as a
    line, n and u at the right end. A row with an estimate but no interval gets a hollow
    marker labelled with the reason (never a bare dot that looks exact); rows without an
    estimate say why in text ("no units"). Rows of a metric where higher is worse are drawn in
    their own colour, and the title says so. The axis is 0-100% for rates, else 0 to the
    largest bound."""
    right, top, row_h = 120, 28, 22
    plot_w = width - left - right
    height = top + row_h * max(1, len(rows)) + 30
    max_chars = max(12, left // 7)
    values = [v for r in rows for v in (r.estimate, r.low, r.high) if v is not None]
    vmax = 1.0 if percent else max(values or [1.0]) * 1.05 or 1.0

    def x(v: float) -> float:
        return left + plot_w * max(0.0, min(1.0, v / vmax))

    parts = [
        f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{_e(title)}" {FONT}>',
        f"<title>{_e(title)}</title>",
        f'<text x="{left + plot_w + 8}" y="{top - 10}" fill="#555">n · u</text>',
    ]
    for k in range(5):
        v = vmax * k / 4
        gx = x(v)
        parts.append(f'<line x1="{gx:.1f}" y1="{top - 6}" x2="{gx:.1f}" '
                     f'y2="{height - 24}" stroke="#e5e5e5"/>')
        parts.append(f'<text x="{gx:.1f}" y="{height - 8}" text-anchor="middle" '
                     f'fill="#555">{_e(_fmt(v, percent))}</text>')
    for i, r in enumerate(rows):
        cy = top + row_h * i + row_h / 2
        weight = ' font-weight="bold"' if r.emphasis else ""
        label = _e(r.label if len(r.label) <= max_chars else r.label[: max_chars - 1] + "…")
        parts.append(f'<text x="{left - 8}" y="{cy + 4:.1f}" text-anchor="end"{weight}>'
                     f"{label}</text>")
        counts = _counts(r)
        if counts:
            parts.append(f'<text class="counts" x="{left + plot_w + 8}" y="{cy + 4:.1f}" '
                         f'fill="#555">{_e(counts)}</text>')
        if r.estimate is None:
            parts.append(f'<text class="no-estimate" x="{left + 4}" y="{cy + 4:.1f}" '
                         f'fill="#999">{_e(r.detail or "no rate")}</text>')
            continue
        has_ci = r.low is not None and r.high is not None
        tip = _e(f"{r.label}: {_fmt(r.estimate, percent)}"
                 + (f" [{_fmt(r.low, percent)}, {_fmt(r.high, percent)}]" if has_ci
                    else f" ({r.detail or NO_INTERVAL})")
                 + (f" — {counts}" if counts else "")
                 + (" — higher is worse" if r.worse else ""))
        group = [f"<g><title>{tip}</title>"]
        colour = "#d62728" if r.emphasis else (WORSE_COLOUR if r.worse else BETTER_COLOUR)
        if has_ci:
            ci_colour = WORSE_CI if r.worse else BETTER_CI
            group.append(f'<line class="mark ci" x1="{x(r.low):.1f}" y1="{cy:.1f}" '
                         f'x2="{max(x(r.high), x(r.low) + 1):.1f}" y2="{cy:.1f}" '
                         f'stroke="{ci_colour}" stroke-width="3" stroke-linecap="round"/>')
            group.append(f'<circle class="mark est" cx="{x(r.estimate):.1f}" cy="{cy:.1f}" '
                         f'r="5" fill="{colour}"/>')
        else:
            group.append(f'<circle class="mark est hollow" cx="{x(r.estimate):.1f}" '
                         f'cy="{cy:.1f}" r="5" fill="#ffffff" stroke="{colour}" '
                         f'stroke-width="2"/>')
            anchor, tx = ("end", x(r.estimate) - 9) if r.estimate > 0.6 * vmax else (
                "start", x(r.estimate) + 9)
            group.append(f'<text class="no-interval" x="{tx:.1f}" y="{cy + 4:.1f}" '
                         f'text-anchor="{anchor}" fill="#777">'
                         f"{_e(r.detail or NO_INTERVAL)}</text>")
        group.append("</g>")
        if r.href:
            parts.append(f'<a href="{_e(r.href)}">' + "".join(group) + "</a>")
        else:
            parts.append("".join(group))
    parts.append("</svg>")
    return "".join(parts)


def stacked_bars(bars: list[tuple[str, dict[str, int]]], *, title: str,
                 order: tuple[str, ...] = (), width: int = 640) -> str:
    """Horizontal 100% stacked bars (one per label) of category counts, with a legend."""
    left, right, top, row_h = 190, 24, 10, 24
    cats = list(order) + sorted({c for _, b in bars for c in b} - set(order))
    cats = [c for c in cats if any(b.get(c) for _, b in bars)]
    per_row = 3  # legend entries per line: room for "partially_supported"
    legend_rows = (len(cats) + per_row - 1) // per_row
    height = top + row_h * max(1, len(bars)) + 18 * legend_rows + 16
    plot_w = width - left - right
    colour = {c: CATEGORY_COLOURS.get(c, PALETTE[i % len(PALETTE)]) for i, c in enumerate(cats)}
    parts = [
        f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{_e(title)}" {FONT}>',
        f"<title>{_e(title)}</title>",
    ]
    for i, (label, counts) in enumerate(bars):
        y = top + row_h * i
        total = sum(counts.values())
        parts.append(f'<text x="{left - 8}" y="{y + 15}" text-anchor="end">{_e(label)} '
                     f"(n={total:,})</text>")
        x0 = float(left)
        for c in cats:
            n = counts.get(c, 0)
            if not n or not total:
                continue
            w = plot_w * n / total
            parts.append(f'<rect class="mark" x="{x0:.1f}" y="{y + 3}" width="{w:.1f}" '
                         f'height="{row_h - 6}" fill="{colour[c]}"><title>'
                         f"{_e(f'{label}: {c} {n:,} of {total:,} ({100 * n / total:.1f}%)')}"
                         f"</title></rect>")
            x0 += w
    ly = top + row_h * max(1, len(bars)) + 8
    for i, c in enumerate(cats):
        lx = left + (i % per_row) * (plot_w / per_row)
        yy = ly + 18 * (i // per_row)
        parts.append(f'<rect x="{lx:.1f}" y="{yy}" width="10" height="10" '
                     f'fill="{colour[c]}"/><text x="{lx + 14:.1f}" y="{yy + 9}">{_e(c)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _band(band: dict, xs: dict[str, float], y: Any, step: float, percent: bool) -> str:
    """The shaded baseline band over the dates it spans (those on the plot), its level
    dashed."""
    first, last = band["dates"]
    inside = [x for d, x in xs.items() if first <= d <= last]
    if not inside:
        return ""
    x0, x1 = min(inside) - step / 2, max(inside) + step / 2
    y_hi, y_lo, y_level = y(band["high"]), y(band["low"]), y(band["level"])
    tip = _e(f"{band['label']}: {_fmt(band['level'], percent)}; no change from it puts this "
             f"date between {_fmt(band['low'], percent)} and {_fmt(band['high'], percent)}")
    return (f'<g class="band"><title>{tip}</title><rect x="{x0:.1f}" y="{y_hi:.1f}" '
            f'width="{x1 - x0:.1f}" height="{max(y_lo - y_hi, 1):.1f}" fill="#1f5fa8" '
            f'fill-opacity="0.12"/><line x1="{x0:.1f}" y1="{y_level:.1f}" x2="{x1:.1f}" '
            f'y2="{y_level:.1f}" stroke="#1f5fa8" stroke-dasharray="4,3" '
            f'stroke-opacity="0.6"/></g>')


def trend_plot(series: dict[str, list[tuple[str, float | None, float | None, float | None]]],
               dates: list[str], *, title: str, percent: bool = True,
               width: int = 640, band: dict | None = None) -> str:
    """Estimates over observation dates, one coloured line (with interval whiskers) per
    series; a date without a value leaves a gap. ``band`` (optional: ``low``, ``high``,
    ``level``, ``dates`` (first, last), ``label``): a shaded range over those dates, the
    baseline band of :func:`citeaudit.comparisons.report.baseline_bands`."""
    left, right, top, bottom = 56, 150, 16, 40
    height = 220
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [v for pts in series.values() for _, e, lo, hi in pts for v in (e, lo, hi)
              if v is not None]
    vmax = 1.0 if percent else (max(values or [1.0]) * 1.05 or 1.0)
    xs = {d: left + (plot_w * (i + 0.5) / max(1, len(dates))) for i, d in enumerate(dates)}

    def y(v: float) -> float:
        return top + plot_h * (1 - max(0.0, min(1.0, v / vmax)))

    parts = [
        f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{_e(title)}" {FONT}>',
        f"<title>{_e(title)}</title>",
    ]
    for k in range(5):
        v = vmax * k / 4
        parts.append(f'<line x1="{left}" y1="{y(v):.1f}" x2="{left + plot_w}" '
                     f'y2="{y(v):.1f}" stroke="#e5e5e5"/><text x="{left - 6}" '
                     f'y="{y(v) + 4:.1f}" text-anchor="end" fill="#555">'
                     f"{_e(_fmt(v, percent))}</text>")
    for d in dates:
        parts.append(f'<text x="{xs[d]:.1f}" y="{height - 20}" text-anchor="middle" '
                     f'fill="#555">{_e(d)}</text>')
    if band is not None:
        parts.append(_band(band, xs, y, plot_w / max(1, len(dates)), percent))
    names = sorted(series, key=lambda n: (n != "all engines", n))  # the margin first, in black
    for i, name in enumerate(names):
        pts = series[name]
        colour = "#111111" if name == "all engines" else PALETTE[(i - 1) % len(PALETTE)]
        known = [(d, e, lo, hi) for d, e, lo, hi in pts if e is not None and d in xs]
        if len(known) > 1:
            path = " ".join(f"{xs[d]:.1f},{y(e):.1f}" for d, e, _, _ in known)
            stroke = 3 if name == "all engines" else 2
            parts.append(f'<polyline class="mark" points="{path}" fill="none" '
                         f'stroke="{colour}" stroke-width="{stroke}"/>')
        for d, e, lo, hi in known:
            tip = _e(f"{name} {d}: {_fmt(e, percent)}" + (
                f" [{_fmt(lo, percent)}, {_fmt(hi, percent)}]" if lo is not None
                and hi is not None else ""))
            parts.append(f"<g><title>{tip}</title>")
            if lo is not None and hi is not None:
                parts.append(f'<line class="mark ci" x1="{xs[d]:.1f}" y1="{y(lo):.1f}" '
                             f'x2="{xs[d]:.1f}" y2="{min(y(hi), y(lo) - 1):.1f}" '
                             f'stroke="{colour}" stroke-opacity="0.5" stroke-width="2"/>')
            parts.append(f'<circle class="mark est" cx="{xs[d]:.1f}" cy="{y(e):.1f}" r="4" '
                         f'fill="{colour}"/></g>')
        ly = top + 16 * i
        parts.append(f'<rect x="{left + plot_w + 12}" y="{ly}" width="10" height="10" '
                     f'fill="{colour}"/><text x="{left + plot_w + 26}" y="{ly + 9}">'
                     f"{_e(name)}</text>")
    parts.append("</svg>")
    return "".join(parts)
