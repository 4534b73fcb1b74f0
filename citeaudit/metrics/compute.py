"""The ``metrics`` table: one row per (metric, stratum) with counts, unresolved and interval.

Steps: each metric's SQL file selects its *units* (a citation, a pair, a claim, a tuple, an
answer) with the answer's strata and ``y`` (1/0 for a rate, a number for a mean, NULL when
unresolved); DuckDB counts them per stratum and margin (``count_metric_strata.sql``); then
:mod:`citeaudit.stats` gives each row its estimate and 95% interval:

* unweighted metrics, and weighted rows whose units are one per query with one design
  weight: Wilson on the counts (the weighted and unweighted rates coincide);
* other weighted rows: the Hájek ratio with weight 1/inclusion_prob and a Wilson interval on
  Kish's effective sample size over the design effect of clustering by query (the citations,
  claims and engines' answers of one query move together), one design effect per metric
  estimated over all its units, so a row's effective size never depends on its own k;
  coverage checked by simulation (tests/stats/test_stats_coverage.py);
  beside it, for rows that span several domains, a percentile cluster bootstrap by domain
  (fixed seed) as a sensitivity interval: how much the rate moves when whole domains do;
* means (tokens per served answer): the mean with a t interval;
* F1 (``kind = "f1"``): the harmonic mean of its two component rates of the same row, with a
  cluster bootstrap by query.

Unresolved units never enter a numerator or a denominator; they are counted beside. A metric
whose input table is absent gets one row with ``status = 'input_missing'`` and no numbers; one
whose inputs are there but hold no unit gets one ``no_units`` row. A row whose variance cannot
be estimated (one query) gets ``status = 'no_interval'`` and a note, never ``ok``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from citeaudit import duck
from citeaudit.metrics import inputs
from citeaudit.metrics.definitions import METRICS, MetricDef
from citeaudit.stats import (
    Interval,
    cluster_bootstrap,
    cluster_design_effect,
    f1_cluster_bootstrap,
    hajek_ratio,
    hajek_wilson,
    wilson,
)

BOOTSTRAP_REPS = 2000
BOOTSTRAP_SEED = 20240601
LEVELS = ("overall", "engine", "domain", "stratum")
ALL = "all"

UNIT_SCHEMA = pa.schema(
    [
        ("metric", pa.string()),
        ("unit_id", pa.string()),
        ("answer_id", pa.string()),
        ("query_id", pa.string()),
        ("engine", pa.string()),
        ("domain", pa.string()),
        ("risk_band", pa.string()),
        ("inclusion_prob", pa.float64()),
        ("y", pa.float64()),
        ("category", pa.string()),
    ]
)

METRICS_SCHEMA = pa.schema(
    [
        ("metric", pa.string()),
        ("level", pa.string()),
        ("engine", pa.string()),
        ("domain", pa.string()),
        ("risk_band", pa.string()),
        ("unit", pa.string()),
        ("numerator", pa.float64()),
        ("denominator", pa.int64()),
        ("unresolved", pa.int64()),
        ("estimate", pa.float64()),
        ("ci_low", pa.float64()),
        ("ci_high", pa.float64()),
        ("method", pa.string()),
        ("weighting", pa.string()),
        ("cluster_by", pa.string()),
        ("n_clusters", pa.int64()),
        ("n_answers", pa.int64()),
        ("sum_weights", pa.float64()),
        ("domain_bootstrap_low", pa.float64()),
        ("domain_bootstrap_high", pa.float64()),
        ("breakdown", pa.string()),
        ("status", pa.string()),
        ("note", pa.string()),
    ]
)
_GROUP_KEYS = {
    "overall": ["metric"],
    "engine": ["metric", "engine"],
    "domain": ["metric", "domain"],
    "stratum": ["metric", "engine", "domain", "risk_band"],
}


_FRAME_COLUMNS = ["metric", "engine", "domain", "risk_band", "query_id", "inclusion_prob", "y"]


@dataclass
class MetricsResult:
    """The metrics table, and the metrics that could not be computed with the missing inputs."""

    table: pa.Table
    missing: dict[str, list[str]] = field(default_factory=dict)
    inputs: dict[str, Path] = field(default_factory=dict)


def select_units(con: duckdb.DuckDBPyConnection, names: set[str]) -> tuple[pa.Table, dict]:
    """Units of every metric whose inputs are registered; and {metric: missing inputs}."""
    parts, missing = [], {}
    for m in METRICS:
        absent = [t for t in m.inputs if t not in names]
        if absent:
            missing[m.name] = absent
            continue
        if m.kind == "f1":
            continue
        parts.append(duck.query(con, m.sql).select(UNIT_SCHEMA.names).cast(UNIT_SCHEMA))
    units = pa.concat_tables(parts) if parts else UNIT_SCHEMA.empty_table()
    return units, missing


class _Units(NamedTuple):
    """Resolved units of one row as arrays: y, design weight, query and domain codes."""

    y: np.ndarray
    w: np.ndarray
    query: np.ndarray
    domain: np.ndarray

    def take(self, idx: np.ndarray) -> _Units:
        return _Units(self.y[idx], self.w[idx], self.query[idx], self.domain[idx])


def _resolved_units(df: pd.DataFrame) -> _Units:
    """Arrays of the resolved units; string ids become integer codes once (fast grouping)."""
    ip = df["inclusion_prob"].to_numpy(dtype=np.float64, na_value=np.nan)
    return _Units(
        df["y"].to_numpy(dtype=np.float64),
        np.where(np.isnan(ip), np.nan, 1.0 / ip),
        pd.factorize(df["query_id"], use_na_sentinel=False)[0],
        pd.factorize(df["domain"], use_na_sentinel=False)[0],
    )


def _interval(m: MetricDef, row: dict[str, Any], group: _Units | None,
              design_effect: float | None = None
              ) -> tuple[Interval, str, str | None, int | None]:
    """(interval, weighting, cluster_by, n_clusters) for one counts row."""
    den = int(row["denominator"])
    if m.kind == "mean":
        assert group is not None
        return hajek_ratio(group.y, np.ones(den)), "unweighted", None, None
    num = int(round(row["total"]))
    if not m.weighted:
        return wilson(num, den), "unweighted", None, None
    equal = row["min_inclusion_prob"] == row["max_inclusion_prob"]
    if equal and int(row["n_queries"]) == den:
        return wilson(num, den), "inverse_inclusion_prob (equal in row)", None, None
    assert group is not None
    iv = hajek_wilson(group.y, group.w, clusters=group.query, design_effect=design_effect)
    return iv, "inverse_inclusion_prob", "query", int(row["n_queries"])


def _design_effects(arrays: _Units, overall: dict) -> dict[str, float]:
    """{metric: design effect of clustering by query}, estimated once over all the resolved
    units of each weighted rate and applied to every row of it (a generalized design effect):
    a row's own few failures say little about how outcomes cluster, and one design effect per
    metric keeps each row's effective size fixed by its design, whatever its k."""
    out = {}
    for m in METRICS:
        if not m.weighted or m.kind != "rate":
            continue
        idx = overall.get(m.name)
        if idx is None:
            idx = overall.get((m.name,))
        if idx is None or len(idx) == 0:
            continue
        g = arrays.take(idx)
        out[m.name] = cluster_design_effect(g.y, g.w, g.query)
    return out


def _domain_bootstrap(m: MetricDef, row: dict[str, Any], group: _Units | None,
                      reps: int, seed: int) -> Interval | None:
    """The sensitivity interval: whole domains resampled (weighted rows over >= 2 domains)."""
    if group is None or not m.weighted or m.kind != "rate" or int(row["n_domains"]) < 2:
        return None
    return cluster_bootstrap(group.y, group.w, group.domain, reps=reps, seed=seed)


NO_INTERVAL_NOTE = "no interval (1 cluster): the variance cannot be estimated from one query"


def _status(iv: Interval) -> tuple[str, list[str]]:
    """``ok``, or ``no_interval`` with the reason first among the notes."""
    if iv.estimate is not None and (iv.low is None or iv.high is None):
        return "no_interval", [NO_INTERVAL_NOTE, *iv.notes]
    return "ok", list(iv.notes)


def _f1_rows(m: MetricDef, rows: list[dict[str, Any]], arrays: _Units,
             groups: dict[str, dict], reps: int, seed: int) -> list[dict[str, Any]]:
    """One F1 row per overall, engine and domain row that both components computed (the paper
    reports engines and the pool; full strata are left to the components, whose bootstrap by
    query per stratum would cost more than it tells)."""
    prec_name, rec_name = m.components
    by_key = {(r["metric"], r["level"], r["engine"], r["domain"], r["risk_band"]): r
              for r in rows}
    out = []
    for r in rows:
        if r["metric"] != prec_name or r.get("estimate") is None or r["level"] == "stratum":
            continue
        key = (r["level"], r["engine"], r["domain"], r["risk_band"])
        rec = by_key.get((rec_name, *key))
        if rec is None or rec.get("estimate") is None:
            continue
        sides = []
        for name in (prec_name, rec_name):
            gkey = tuple({"metric": name, "engine": r["engine"], "domain": r["domain"],
                          "risk_band": r["risk_band"]}[k] for k in _GROUP_KEYS[r["level"]])
            idx = groups[r["level"]].get(gkey)
            if idx is None:
                idx = groups[r["level"]][gkey[0]]
            g = arrays.take(idx)
            sides.append((g.y, g.w, g.query))
        iv = f1_cluster_bootstrap(sides[0], sides[1], reps=reps, seed=seed)
        status, notes = _status(iv)
        notes.insert(0 if status == "ok" else 1,
                     f"precision {r['estimate']:.4f} of {r['denominator']} citations, recall "
                     f"{rec['estimate']:.4f} of {rec['denominator']} claims")
        out.append({
            "metric": m.name, "level": r["level"], "engine": r["engine"],
            "domain": r["domain"], "risk_band": r["risk_band"], "unit": m.unit,
            "numerator": None, "denominator": None,
            "unresolved": int(r["unresolved"]) + int(rec["unresolved"]),
            "estimate": iv.estimate, "ci_low": iv.low, "ci_high": iv.high,
            "method": iv.method, "weighting": r["weighting"], "cluster_by": "query",
            "n_clusters": None, "n_answers": max(r["n_answers"], rec["n_answers"]),
            "status": status, "note": "; ".join(notes),
        })
    return out


def _no_unit_rows(computed: set[str], missing: dict[str, list[str]]) -> list[dict]:
    """One overall row for each metric whose inputs exist but hold no unit at all."""
    rows = []
    for m in METRICS:
        if m.name in computed or m.name in missing:
            continue
        rows.append({
            "metric": m.name, "level": "overall", "engine": ALL, "domain": ALL,
            "risk_band": ALL, "unit": m.unit, "denominator": 0, "unresolved": 0,
            "numerator": 0.0, "status": "no_units",
            "note": f"no units: no {m.unit} in this date × codebook (no rate, not a zero)",
        })
    return rows


def _missing_rows(missing: dict[str, list[str]], date: str, version: str) -> list[dict]:
    rows = []
    for m in METRICS:
        if m.name not in missing:
            continue
        what = ", ".join(missing[m.name])
        rows.append({
            "metric": m.name, "level": "overall", "engine": ALL, "domain": ALL,
            "risk_band": ALL, "unit": m.unit, "status": "input_missing",
            "note": f"input not available for observation_date={date}, codebook={version}: "
                    f"{what} (no rate is reported, not a zero)",
        })
    return rows


def compute(
    con: duckdb.DuckDBPyConnection,
    names: set[str],
    date: str,
    version: str,
    *,
    reps: int = BOOTSTRAP_REPS,
    seed: int = BOOTSTRAP_SEED,
) -> MetricsResult:
    """The metrics rows for the views registered in ``con`` (see :func:`inputs.register`)."""
    units, missing = select_units(con, names)
    con.register("metric_units", units)
    try:
        counts = duck.query(con, "metrics/count_metric_strata").to_pylist()
    finally:
        con.unregister("metric_units")
    # only the resolved units, and only the columns the intervals group and read, go to pandas
    # (Python strings per cell: the ids the intervals never read would double the memory)
    y = units.column("y")
    resolved = pc.and_kleene(pc.is_valid(y), pc.invert(pc.is_nan(y)))
    df = units.filter(resolved).select(_FRAME_COLUMNS).to_pandas()
    arrays = _resolved_units(df)
    groups = {
        level: df.groupby(keys, dropna=False, sort=False).indices
        for level, keys in _GROUP_KEYS.items()
    }
    by_name = {m.name: m for m in METRICS}
    deffs = _design_effects(arrays, groups["overall"])
    rows: list[dict[str, Any]] = []
    for row in counts:
        m = by_name[row["metric"]]
        level = row["level"]
        if m.overall_only and level != "overall":
            continue
        out: dict[str, Any] = {k: row[k] for k in ("metric", "level", "engine", "domain",
                                                    "risk_band", "denominator", "unresolved")}
        out.update(unit=m.unit, breakdown=row["breakdown"], n_answers=row["n_answers"])
        if m.overall_only:
            out.update(engine=ALL, domain=ALL, risk_band=ALL)
        den = int(row["denominator"])
        out["numerator"] = float(row["total"]) if den else 0.0
        if den == 0:
            out.update(status="no_resolved_units", method=None, weighting=None,
                       note="every unit is unresolved: no rate")
            rows.append(out)
            continue
        key = tuple(row[k] for k in _GROUP_KEYS[level])
        idx = groups[level].get(key)
        if idx is None and len(key) == 1:
            idx = groups[level].get(key[0])
        group = arrays.take(idx) if idx is not None else None
        iv, weighting, cluster_by, n_clusters = _interval(m, row, group, deffs.get(m.name))
        boot = _domain_bootstrap(m, row, group, reps, seed)
        status, notes = _status(iv)
        if boot is not None:
            notes.append(f"domain bootstrap: {boot.notes[0]}" if boot.notes else
                         "domain bootstrap")
        out.update(
            estimate=iv.estimate, ci_low=iv.low, ci_high=iv.high, method=iv.method,
            weighting=weighting, cluster_by=cluster_by, n_clusters=n_clusters,
            sum_weights=iv.sum_weights, status=status, note="; ".join(notes) or None,
            domain_bootstrap_low=boot.low if boot else None,
            domain_bootstrap_high=boot.high if boot else None,
        )
        rows.append(out)
    for m in METRICS:
        if m.kind == "f1" and m.name not in missing:
            rows += _f1_rows(m, rows, arrays, groups, reps, seed)
    rows += _no_unit_rows({r["metric"] for r in rows}, missing)
    rows += _missing_rows(missing, date, version)
    order = {m.name: i for i, m in enumerate(METRICS)}
    rows.sort(key=lambda r: (order[r["metric"]], LEVELS.index(r["level"]), r["engine"],
                             r["domain"], r["risk_band"]))
    table = pa.Table.from_pylist(rows, schema=METRICS_SCHEMA)
    return MetricsResult(table, missing)


def compute_partition(derived: Path, date: str, version: str, **kwargs: Any) -> MetricsResult:
    """Compute the metrics of one date × codebook from whatever inputs are on disk."""
    tables = inputs.available(derived, date, version)
    con = duck.connect()
    try:
        names = inputs.register(con, tables)
        result = compute(con, names, date, version, **kwargs)
    finally:
        con.close()
    result.inputs = tables
    return result


def breakdown(row: dict[str, Any]) -> dict[str, int]:
    """The per-category unit counts of a metrics row (empty when none)."""
    return json.loads(row["breakdown"]) if row.get("breakdown") else {}
