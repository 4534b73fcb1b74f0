"""Build the HTML report of one date × codebook: ``report/observation_date=D/codebook=V/``.

The page is one self-contained file (inline CSS and SVG, no script, no external request; a
Content-Security-Policy forbids both) rendered by Jinja2 with autoescaping, so archived titles,
URLs and codebook text are shown as text, never run. Sections read the ``metrics`` table of the
partition (and of earlier dates for the trend) plus, when they exist, the review queue, the
agreement table, omission endpoints and existence states; an absent input is named on the page.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

from citeaudit import duck, parquet_io, storage
from citeaudit.comparisons import domains as cited_domains
from citeaudit.comparisons import report as changes
from citeaudit.metrics import inputs
from citeaudit.metrics.definitions import BY_NAME, DEFINITIONS, METHODS, METRICS
from citeaudit.report import headline as hl
from citeaudit.report import rejections, svg

REPORT = "report"
INDEX = "index.html"
PLOT = "headline.svg"
FINDINGS_LIMIT = 50
L1_ORDER = ("pass", "pass_rendered", "changed", "dead", "dead_soft_404", "unresolved",
            "no_existence_row")
"""The L1 breakdown's categories in bar order; ``pass_rendered`` (a pass read from a browser's
rendered DOM) stands beside ``pass``, the walls and shells (``unresolved_<reason>``) follow."""
SUPPORT_ORDER = ("fully_supported", "partially_supported", "unsupported", "contradicted",
                 "unresolved")
POLICY_ORDER = ("PASS", "CONTEXTUALIZE", "REVIEW", "ABSTAIN")
# (ours, fail-closed; the paper's definition) shown side by side
PAIRED = (("citation_recall", "liu_citation_recall"),
          ("citation_precision", "liu_citation_precision"))


@dataclass(frozen=True)
class ReportResult:
    """What the report asset writes and attaches to its materialization."""

    path: Path
    plot_path: Path
    plot_svg: str
    markdown: str
    sections: dict[str, bool]


def report_dir(derived: Path, date: str, version: str) -> Path:
    """``<derived>/report/observation_date=D/codebook=V``: codebooks never share a page."""
    return parquet_io.partition_dir(derived, REPORT,
                                    {"observation_date": date, "codebook": version})


@cache
def _env() -> Environment:
    """The report's template environment, one per process: it keeps the compiled template
    (compiling it took about a fifth of a second per report; jinja2 still reloads a template
    whose file changed)."""
    return Environment(
        loader=PackageLoader("citeaudit.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_finalize,
    )


def _finalize(value: Any) -> Any:
    """What the template prints: never a literal ``None``; whole floats as integers."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return f"{int(value):,}"
    return value


def _write_atomic(path: Path, text: str) -> None:
    storage.write_bytes_atomic(path, text.encode("utf-8"))


def _cell(row: dict[str, Any] | None, metric: str) -> dict[str, Any]:
    """A headline/table cell: text, estimate, bounds, counts and a tooltip naming the
    numerator and denominator."""
    m = BY_NAME[metric]
    cell = {"metric": metric, "text": hl.fmt_cell(row), "estimate": None}
    if row is None or row.get("estimate") is None:
        cell["tip"] = (row or {}).get("note") or "no units of this engine for this metric"
        return cell
    if m.kind == "f1":
        cell.update(
            estimate=hl.fmt_value(metric, row["estimate"]),
            low=hl.fmt_value(metric, row["ci_low"]) if row["ci_low"] is not None else None,
            high=hl.fmt_value(metric, row["ci_high"]) if row["ci_high"] is not None else None,
            n=None, u=row["unresolved"],
            tip=f"{m.numerator} / ({m.denominator}); {row.get('note') or ''}",
            boot=None)
        return cell
    num = row["numerator"]
    num_text = f"{num:,.0f}" if m.kind == "mean" else f"{int(num):,}"
    cell.update(
        estimate=hl.fmt_value(metric, row["estimate"]),
        low=hl.fmt_value(metric, row["ci_low"]) if row["ci_low"] is not None else None,
        high=hl.fmt_value(metric, row["ci_high"]) if row["ci_high"] is not None else None,
        n=row["denominator"], u=row["unresolved"],
        tip=f"numerator {num_text} ({m.numerator}); denominator {row['denominator']:,} "
            f"({m.denominator}); unresolved beside: {row['unresolved']:,}; "
            f"method {row['method']}, weighting {row['weighting']}"
            + (f"; domain bootstrap [{hl.fmt_value(metric, row['domain_bootstrap_low'])}, "
               f"{hl.fmt_value(metric, row['domain_bootstrap_high'])}]"
               if row.get("domain_bootstrap_low") is not None else ""),
        boot=(f"{hl.fmt_value(metric, row['domain_bootstrap_low'])}–"
              f"{hl.fmt_value(metric, row['domain_bootstrap_high'])}"
              if row.get("domain_bootstrap_low") is not None else None),
    )
    return cell


def _plot_detail(r: dict[str, Any]) -> str:
    """Why a plotted row has no estimate, or (with one) no interval; '' otherwise."""
    if r.get("reason") == "no_interval":
        return svg.NO_INTERVAL
    if r["estimate"] is None:
        return {"no_units": "no units", "input_missing": "input missing",
                "no_resolved_units": "no rate: every unit unresolved"}.get(
                    r.get("reason"), r.get("note") or "no rate")
    return ""


def _interval_rows(rows: list[dict[str, Any]], metric: str, level: str, key: str,
                   expected: list[str] = ()) -> list[svg.IntervalRow]:
    """Plot rows of one metric at one level, one per value of ``key``; every value in
    ``expected`` that has no row of this metric appears as "no units" instead of vanishing."""
    m = BY_NAME[metric]
    out, seen = [], set()
    for r in rows:
        if r["metric"] == metric and r["margin"] == level:
            seen.add(r[key])
            out.append(svg.IntervalRow(
                r[key], r["estimate"], r["ci_low"], r["ci_high"], _plot_detail(r),
                f"#def-{metric}", n=r["denominator"], u=r["unresolved"],
                worse=not m.higher_is_better))
    for value in expected:
        if value not in seen:
            out.append(svg.IntervalRow(value, None, None, None, "no units", f"#def-{metric}",
                                       n=0, u=0, worse=not m.higher_is_better))
    return out


def _rate_plots(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    engines = sorted({r["engine"] for r in rows if r["margin"] == "engine"})
    domains = sorted({r["domain"] for r in rows if r["margin"] == "domain"})
    plots = []
    for m in METRICS:
        mine = [r for r in rows if r["metric"] == m.name]
        if not mine:
            continue
        if mine[0]["reason"] in ("input_missing", "no_units") and len(mine) == 1:
            plots.append({"metric": m.name, "title": m.title, "svg": None,
                          "note": mine[0]["note"], "worse": not m.higher_is_better})
            continue
        overall = _interval_rows(rows, m.name, "overall", "engine")
        overall = [replace(o, label="all engines", emphasis=True) for o in overall]
        if m.overall_only:
            engines_rows, domain_rows = [], []
        else:
            engines_rows = _interval_rows(rows, m.name, "engine", "engine", engines)
            domain_rows = [replace(d, label=f"domain: {d.label}") for d in
                           _interval_rows(rows, m.name, "domain", "domain", domains)]
        worse = "" if m.higher_is_better else " (higher is worse)"
        plot = svg.interval_plot(overall + engines_rows + domain_rows,
                                 title=f"{m.title}{worse}: estimate and 95% interval by engine "
                                       f"and domain", percent=m.kind != "mean")
        plots.append({"metric": m.name, "title": m.title, "svg": Markup(plot), "note": None,
                      "worse": not m.higher_is_better})
    return plots


def _paired_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per engine and overall: each paired metric under both definitions, and Liu's F1."""
    idx = hl.index_rows(rows)
    engines = sorted({r["engine"] for r in rows if r["margin"] == "engine"})
    out = []
    for engine in [*engines, "all"]:
        level = "overall" if engine == "all" else "engine"
        cells = []
        for a, b in PAIRED:
            for name in (a, b):
                cells.append(_cell(idx.get((name, level, engine, "all", "all")), name))
        f1 = idx.get(("liu_citation_f1", level, engine, "all", "all"))
        cells.append(_cell(f1, "liu_citation_f1"))
        out.append({"engine": "all engines" if engine == "all" else engine, "cells": cells})
    return out


def _breakdown(rows: list[dict[str, Any]], metric: str, order: tuple[str, ...],
               title: str) -> dict[str, Any] | None:
    mine = [r for r in rows if r["metric"] == metric]
    if not mine or (len(mine) == 1 and mine[0]["reason"] == "input_missing"):
        return {"svg": None, "note": mine[0]["note"] if mine else "not computed",
                "rows": [], "categories": []}
    bars = [(("all engines" if r["margin"] == "overall" else r["engine"]),
             json.loads(r["breakdown"] or "{}"))
            for r in mine if r["margin"] in ("overall", "engine")]
    cats = [c for c in order if any(b.get(c) for _, b in bars)]
    cats += sorted({c for _, b in bars for c in b} - set(cats))
    table = [{"label": label, "counts": [b.get(c, 0) for c in cats], "total": sum(b.values())}
             for label, b in bars]
    return {"svg": Markup(svg.stacked_bars(bars, title=title, order=order)), "note": None,
            "rows": table, "categories": cats}


def _trend(trend: list[dict[str, Any]], bands: dict[str, dict[str, Any]] | None = None
           ) -> tuple[list[str], list[dict[str, Any]]]:
    dates = sorted({t["observation_date"] for t in trend})
    plots = []
    for metric in hl.HEADLINE:
        m = BY_NAME[metric]
        series: dict[str, list] = {}
        for t in trend:
            if t["metric"] != metric or t["estimate"] is None:
                continue
            name = "all engines" if t["margin"] == "overall" else t["engine"]
            series.setdefault(name, []).append(
                (t["observation_date"], t["estimate"], t["ci_low"], t["ci_high"]))
        if not series:
            continue
        plots.append({"metric": metric, "title": m.title, "svg": Markup(svg.trend_plot(
            series, dates, title=f"{m.title} over observation dates",
            percent=m.kind == "rate", band=(bands or {}).get(metric)))})
    return dates, plots


def _agreement(rows: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    """Agreement rows split for display: alpha per stratum; kappa, grader agreement and the
    grader confusion counts of the overall stratum (other strata are counted, not listed)."""
    if rows is None:
        return None
    overall = [r for r in rows if r["stratum"] == "overall"]
    shown = {
        "alpha": [r for r in rows if r["statistic"] == "krippendorff_alpha"],
        "kappa": [r for r in overall if r["statistic"] == "cohen_kappa"],
        "grader": [r for r in rows if r["statistic"] == "grader_agreement"],
        "confusion": [r for r in overall if r["statistic"] == "confusion"],
    }
    shown["other"] = len(rows) - sum(len(v) for v in shown.values())
    shown["empty"] = not rows
    return shown


EVIDENCE_COLUMNS = pa.schema([
    ("citation_id", pa.string()), ("atom_index", pa.int32()), ("atom_text", pa.string()),
    ("passage_text", pa.string()), ("mismatch_terms", pa.list_(pa.string())),
    ("verdict", pa.string()), ("reason", pa.string()), ("evidence_score", pa.float64())])
NUMERIC_KINDS = ("number", "percentage", "currency")
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def _with_codebook(con: duckdb.DuckDBPyConnection, names: set[str], version: str) -> None:
    """Give the judged rejection views of one partition their ``codebook`` column (a
    partition file does not carry its partition keys), as the catalog's views have it."""
    for name in ("rejected_annotations", "rejected_records"):
        if name not in names:
            continue
        table = con.table(name).to_arrow_table()
        if "codebook" in table.column_names:
            continue
        table = table.append_column("codebook", pa.array([version] * table.num_rows,
                                                         pa.string()))
        con.execute(f"DROP VIEW {name}")  # a name from the constant tuple above
        con.register(name, table)


def _register_evidence(con: duckdb.DuckDBPyConnection, derived: Path, date: str,
                       version: str) -> None:
    """The evidence locator's rows of this date × codebook as ``support_evidence``; an empty
    table of the same columns when the locator did not run (the findings show no signal)."""
    table = parquet_io.read_optional(derived, "support_evidence",
                                     {"observation_date": date, "codebook": version})
    if table is None:
        table = EVIDENCE_COLUMNS.empty_table()
    con.register("support_evidence", table.select(EVIDENCE_COLUMNS.names))


def _mark(text: str | None, spans: list[tuple[int, int]]) -> Markup:
    """``text`` escaped, with each span wrapped in ``<mark>``."""
    if not text:
        return Markup("")
    out, last = [], 0
    for start, end in sorted(set(spans)):
        if start < last:
            continue
        out += [escape(text[last:start]), Markup("<mark>"), escape(text[start:end]),
                Markup("</mark>")]
        last = end
    out.append(escape(text[last:]))
    return Markup("").join(out)


def _term_spans(text: str | None, terms: list[str]) -> list[tuple[int, int]]:
    """Where the locator's mismatch terms (``kind:term``, numbers without separators) occur in
    ``text``: numbers compared without thousands separators, other terms case-insensitively."""
    if not text:
        return []
    spans = []
    for item in terms:
        kind, _, term = item.partition(":")
        if kind in NUMERIC_KINDS:
            spans += [m.span() for m in NUMBER.finditer(text)
                      if m.group().replace(",", "").rstrip(".") == term]
        elif term:
            spans += [m.span() for m in re.finditer(re.escape(term), text, re.IGNORECASE)]
    return spans


def _marked(f: dict[str, Any]) -> dict[str, Any]:
    """A finding with its claim atom and located passage marked: in the atom, the terms the
    page does not back; in the passage, the numbers of the same kinds it says instead."""
    terms = list(f.get("mismatch_terms") or [])
    kinds = {t.partition(":")[0] for t in terms}
    passage_spans = ([m.span() for m in NUMBER.finditer(f.get("passage_text") or "")]
                     if kinds & set(NUMERIC_KINDS) else [])
    return {**f, "atom_marked": _mark(f.get("atom_text"), _term_spans(f.get("atom_text"), terms)),
            "passage_marked": _mark(f.get("passage_text"), passage_spans),
            "mismatch_words": ", ".join(t.partition(":")[2] for t in terms)}


def _query_or_none(con: duckdb.DuckDBPyConnection, names: set[str], need: tuple[str, ...],
                   sql: str, params: dict[str, Any] | None = None) -> list[dict] | None:
    if any(n not in names for n in need):
        return None
    return duck.query(con, sql, params).to_pylist()


def _headline_plot(rows: list[dict[str, Any]]) -> str:
    """The plot attached to the materialization: headline rates by engine, with intervals."""
    items = []
    for metric in hl.HEADLINE:
        if BY_NAME[metric].kind != "rate":
            continue
        for r in rows:
            if r["metric"] == metric and r["margin"] in ("overall", "engine") and \
                    r["estimate"] is not None:
                label = f"{hl.SHORT[metric]} · {'all' if r['margin'] == 'overall' else r['engine']}"
                items.append(svg.IntervalRow(label, r["estimate"], r["ci_low"], r["ci_high"],
                                             _plot_detail(r), emphasis=r["margin"] == "overall",
                                             n=r["denominator"], u=r["unresolved"],
                                             worse=not BY_NAME[metric].higher_is_better))
    return svg.interval_plot(items, title="Headline rates by engine (95% intervals; orange: "
                                          "higher is worse)", width=880, left=330)


def build(derived: Path, date: str, version: str, *, codebook_description: str = "",
          codebook_metrics: dict[str, str] | None = None, codebook_sha: str = "",
          caveats: list[dict[str, Any]] | None = None) -> ReportResult:
    """Render and write the report of one date × codebook; return where it is and a summary."""
    metrics_file = inputs.partition_file(derived, "metrics", date, version)
    if not metrics_file.is_file():
        raise FileNotFoundError(f"metrics not materialized for {date} × {version}: "
                                f"{metrics_file}")
    con = duck.connect()
    try:
        rows = con.read_parquet(str(metrics_file)).to_arrow_table().to_pylist()
        names = inputs.register(con, inputs.available(derived, date, version))
        trend = duck.query(con, "report/select_metric_trend", {
            "glob": parquet_io.dataset_glob(derived, "metrics", 2), "codebook": version,
            "date": date}).to_pylist()
        limit = {"limit": FINDINGS_LIMIT}
        queue = _query_or_none(con, names, ("review_queue",), "report/count_review_queue")
        agreement = _query_or_none(con, names, ("annotation_agreement",),
                                   "report/select_agreement")
        omissions = _query_or_none(con, names, ("omission_endpoints", "answers"),
                                   "report/select_omission_findings", limit)
        _register_evidence(con, derived, date, version)
        need = ("citation_existence", "citations", "answers")
        l1_findings = _query_or_none(con, names, need, "report/select_findings",
                                     {**limit, "which": "l1"})
        evidence_findings = _query_or_none(con, names, need, "report/select_findings",
                                           {**limit, "which": "evidence"})
        l1_findings = None if l1_findings is None else [_marked(f) for f in l1_findings]
        evidence_findings = (None if evidence_findings is None
                             else [_marked(f) for f in evidence_findings])
        ignored = parquet_io.read_optional(derived, "ignored_inputs")
        if ignored is not None:
            con.register("ignored_inputs", ignored)
            names = names | {"ignored_inputs"}
        _with_codebook(con, names, version)
        not_read = rejections.count(con, names)
    finally:
        con.close()

    head_rows = [{"engine": engine, "cells": [_cell(r, m) for m, r in cells]}
                 for engine, cells in hl.headline_rows(rows)]
    dates, trend_plots = _trend(trend, changes.baseline_bands(derived, date, version))
    period_dates, period = hl.period_cells(trend)
    missing = [{"metric": r["metric"], "title": BY_NAME[r["metric"]].title, "note": r["note"]}
               for r in rows if r["reason"] == "input_missing"]
    paired = [{"fail_closed": BY_NAME[a], "paper": BY_NAME[b]} for a, b in PAIRED]
    plot = _headline_plot(rows)
    context = {
        "date": date, "version": version, "codebook_description": codebook_description,
        "codebook_sha": codebook_sha,
        "columns": [{"metric": m, "short": hl.SHORT[m], "title": BY_NAME[m].title}
                    for m in hl.HEADLINE],
        "paired": paired, "paired_rows": _paired_rows(rows),
        "headline": head_rows, "missing": missing,
        "headline_plot": Markup(plot),
        "rate_plots": _rate_plots(rows),
        "l1": _breakdown(rows, "existence_rate", L1_ORDER,
                         "L1 existence verdicts by engine"),
        "support": _breakdown(rows, "full_support_rate", SUPPORT_ORDER,
                              "Support labels of reviewed pairs by engine"),
        "policy": _breakdown(rows, "omission_rate", POLICY_ORDER,
                             "Policy actions of source-risk tuples by engine"),
        "omissions": omissions, "l1_findings": l1_findings, "not_read": not_read,
        "evidence_findings": evidence_findings,
        "support_ppi": [r for r in rows if r["metric"] == "full_support_rate"
                        and (r.get("ppi_reason") or r.get("ppi_estimate") is not None)],
        "queue": queue, "queue_total": sum(q["n"] for q in queue) if queue else 0,
        "agreement": _agreement(agreement),
        "trend_dates": dates, "trend_plots": trend_plots,
        "period_dates": period_dates,
        "period": [{"metric": c["metric"], "text": hl.fmt_period(c)} for c in period],
        "rows": [{**r, "cell": _cell(r, r["metric"])} for r in rows],
        "definitions": [{"m": m, "codebook_text": (codebook_metrics or {}).get(m.name)}
                        for m in METRICS],
        "methods": METHODS, "definition_names": DEFINITIONS,
        "limit": FINDINGS_LIMIT,
        "caveats": caveats or [],
        "changes": changes.context(derived, date, version),
        "cited_domains": cited_domains.report_context(derived, date, version),
    }
    html = _env().get_template("report.html.j2").render(**context)
    folder = report_dir(derived, date, version)
    path, plot_path = folder / INDEX, folder / PLOT
    _write_atomic(plot_path, plot)
    _write_atomic(path, html)
    sections = {
        "review_queue": queue is not None, "agreement": agreement is not None,
        "omission_endpoints": omissions is not None, "citation_existence": l1_findings is not None,
    }
    return ReportResult(path, plot_path, plot, hl.markdown(rows, f"{date} · codebook {version}"),
                        sections)
