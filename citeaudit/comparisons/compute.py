"""The ``comparisons`` table: what changed between two sides of one metric, and is it real.

Each row compares one metric on two sides, from the ``comparison_units`` rows (per metric,
engine and query: the sums of ``w*y`` and ``w`` over the resolved units, the unresolved beside):

* ``engine_vs_engine``: two engines on this date, paired by query (the panel asks every engine
  the same queries);
* ``vs_previous_date``: one engine (and all engines) on this date against the latest earlier
  date written under the same codebook, paired by query where the panel repeats;
* ``vs_baseline``: against the pooled dates of a trailing window (default the 7 days before),
  a query of several baseline days one cluster;
* ``vs_codebook``: this codebook against every codebook version sorted before it on the same
  date (what a codebook change moved), paired unit for unit by query;
* ``vs_version``: before vs after an intervention. Answers that carry a ``system_version``
  (a model update, a retrieval change; ``citeaudit import --label``) are compared version
  against version, per engine: each version answered on this date against every other version
  answered on this date or in the trailing window, each version's units pooled over those
  dates (a query one cluster), paired by query. Answers without a version are in no side.

The two estimates are the metrics' Hájek ratios (weight 1/inclusion_prob for weighted metrics),
their difference ``a - b`` (a: this date, the first engine, this codebook) has a 95% interval
and a p-value from :func:`citeaudit.stats.difference.ratio_difference` (queries as clusters,
cluster-robust variance, t with G-1 df). Below a floor of evidence
(:func:`citeaudit.stats.difference.below_floor`: fewer than ``MIN_CLUSTERS`` queries on a side,
or fewer than ``MIN_EVENT_CLUSTERS`` query-sides with an event or a non-event) a row keeps its
estimates and difference but gets no interval and no p-value (``reason`` ``too_few_clusters``
or ``too_few_events``): it is not tested, never significant, never an alert. The p-values of
one family are adjusted by Holm's method (``adjustment``). Unresolved units are counted
beside each side, never inside. Only earlier dates and earlier-sorted codebooks are read, so
a run in date order and its rerun write the same bytes.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import date as Date
from datetime import timedelta
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from citeaudit import parquet_io
from citeaudit.comparisons import units
from citeaudit.metrics.definitions import METRICS, MetricDef
from citeaudit.stats.difference import (
    MIN_CLUSTERS,
    MIN_EVENT_CLUSTERS,
    below_floor,
    holm,
    ratio_difference,
)

ALL = "all"
ALPHA = 0.05
BASELINE_DAYS = 7
# how far back "the previous date" is looked for
PREVIOUS_DAYS = 31
ADJUSTMENT = "holm"
FAMILIES = ("engine_vs_engine", "vs_previous_date", "vs_baseline", "vs_codebook", "vs_version")

SCHEMA = pa.schema(
    [
        ("family", pa.string()),
        ("metric", pa.string()),
        ("unit", pa.string()),
        ("engine_a", pa.string()),
        ("engine_b", pa.string()),
        ("period_a", pa.string()),
        ("period_b", pa.string()),
        ("codebook_a", pa.string()),
        ("codebook_b", pa.string()),
        ("version_a", pa.string()),
        ("version_b", pa.string()),
        ("estimate_a", pa.float64()),
        ("estimate_b", pa.float64()),
        ("difference", pa.float64()),
        ("ci_low", pa.float64()),
        ("ci_high", pa.float64()),
        ("se", pa.float64()),
        ("p_value", pa.float64()),
        ("p_adjusted", pa.float64()),
        ("adjustment", pa.string()),
        ("significant", pa.bool_()),
        ("higher_is_better", pa.bool_()),
        ("n_units_a", pa.int64()),
        ("n_units_b", pa.int64()),
        ("unresolved_a", pa.int64()),
        ("unresolved_b", pa.int64()),
        ("paired_queries", pa.int64()),
        ("unpaired_queries_a", pa.int64()),
        ("unpaired_queries_b", pa.int64()),
        ("method", pa.string()),
        ("verdict", pa.string()),
        ("reason", pa.string()),
        ("note", pa.string()),
    ]
)


class Side(NamedTuple):
    """One side's queries (sorted) and, per query, the sums over the resolved units (``num``:
    w*y, ``den``: w), the resolved units (``n``) and the unresolved units (``unres``)."""

    query: np.ndarray
    num: np.ndarray
    den: np.ndarray
    n: np.ndarray
    unres: np.ndarray


_SUMS = [("sum_wy", "sum"), ("sum_w", "sum"), ("resolved", "sum"), ("unresolved", "sum")]


def _split(table: pa.Table, keys: list[str]) -> dict[tuple[str, ...], Side]:
    """{key values: Side} of a table grouped by ``keys`` + query (one thread: the float sums
    add in one order, so a rerun gives the same bytes)."""
    grouped = (table.group_by([*keys, "query_id"], use_threads=False).aggregate(_SUMS)
               .sort_by([(k, "ascending") for k in [*keys, "query_id"]]))
    cols = {c: grouped.column(c).to_numpy(zero_copy_only=False) for c in grouped.column_names}
    out: dict[tuple[str, ...], Side] = {}
    n = grouped.num_rows
    if n == 0:
        return out
    change = np.zeros(n, dtype=bool)
    change[0] = True
    for k in keys:
        change[1:] |= cols[k][1:] != cols[k][:-1]
    starts = np.flatnonzero(change)
    # fixed-width strings: sorted and searched without a Python comparison per element
    query = cols["query_id"].astype(str)
    for a, b in zip(starts, np.r_[starts[1:], n], strict=True):
        out[tuple(str(cols[k][a]) for k in keys)] = Side(
            query[a:b], cols["sum_wy_sum"][a:b].astype(np.float64),
            cols["sum_w_sum"][a:b].astype(np.float64), cols["resolved_sum"][a:b].astype(float),
            cols["unresolved_sum"][a:b].astype(float))
    return out


@dataclass
class Sides:
    """Every (metric, engine) side of one date × codebook, engine ``all`` pooling the
    engines (a query's answers by every engine one cluster)."""

    frames: dict[tuple[str, str], Side] = field(default_factory=dict)

    @classmethod
    def of(cls, tables: list[pa.Table]) -> Sides:
        """The sides of one or more ``comparison_units`` tables pooled (a baseline window's
        dates: the same query on several days is one cluster)."""
        parts = [t.select(["metric", "engine", "query_id", "sum_wy", "sum_w", "resolved",
                           "unresolved"]) for t in tables if t is not None and t.num_rows]
        if not parts:
            return cls()
        table = pa.concat_tables(parts)
        frames = {(m, e): side for (m, e), side in _split(table, ["metric", "engine"]).items()}
        frames.update({(m, ALL): side for (m,), side in _split(table, ["metric"]).items()})
        return cls(frames)

    def engines(self) -> list[str]:
        return sorted({e for _, e in self.frames if e != ALL})

    def get(self, metric: str, engine: str) -> Side | None:
        return self.frames.get((metric, engine))


@dataclass(frozen=True)
class Label:
    """Labels of one side of a comparison."""

    engine: str
    period: str
    codebook: str
    version: str | None = None


def _aligned(side: Side | None, queries: np.ndarray) -> list[np.ndarray]:
    """A side's num, den, n, unres on the union of queries (0 where the side has none)."""
    zeros = [np.zeros(queries.size) for _ in range(4)]
    if side is None or side.query.size == 0:
        return zeros
    at = np.searchsorted(queries, side.query)
    for out, values in zip(zeros, (side.num, side.den, side.n, side.unres), strict=True):
        out[at] = values
    return zeros


def compare_pair(m: MetricDef, a: Side | None, b: Side | None, alpha: float = ALPHA, *,
                 min_clusters: int = MIN_CLUSTERS,
                 min_event_clusters: int = MIN_EVENT_CLUSTERS) -> dict[str, Any]:
    """The numbers of one comparison of metric ``m`` (sides as in :class:`Sides`); below the
    floor (``min_clusters`` queries a side, ``min_event_clusters`` query-sides with an event
    and with a non-event) the estimates and difference without interval or p-value."""
    qa = a.query if a is not None else np.array([], dtype=str)
    qb = b.query if b is not None else np.array([], dtype=str)
    queries = np.union1d(qa, qb)
    an, ad, a_n, a_u = _aligned(a, queries)
    bn, bd, b_n, b_u = _aligned(b, queries)
    out: dict[str, Any] = {
        "n_units_a": int(a_n.sum()), "n_units_b": int(b_n.sum()),
        "unresolved_a": int(a_u.sum()), "unresolved_b": int(b_u.sum()),
    }
    if not qa.size or not qb.size:
        return {**out, "verdict": "unresolved", "reason": "no_units",
                "note": "no units on one side: nothing to compare (not a zero difference)"}
    if out["n_units_a"] == 0 or out["n_units_b"] == 0:
        return {**out, "verdict": "unresolved", "reason": "no_resolved_units",
                "note": "every unit of one side is unresolved: no difference"}
    d = ratio_difference(an, ad, bn, bd, a_units=a_n, b_units=b_n, alpha=alpha,
                         rate=m.kind == "rate")
    out.update(
        estimate_a=d.estimate_a, estimate_b=d.estimate_b, difference=d.difference,
        ci_low=d.low, ci_high=d.high, se=d.se, p_value=d.p_value,
        paired_queries=d.n_paired, unpaired_queries_a=d.n_only_a,
        unpaired_queries_b=d.n_only_b, method=d.method, verdict="estimated",
        reason=None if d.low is not None else "no_interval", note="; ".join(d.notes),
    )
    floor = below_floor(an, ad, bn, bd, rate=m.kind == "rate", min_clusters=min_clusters,
                        min_event_clusters=min_event_clusters)
    if floor is not None and d.difference is not None:
        out.update(ci_low=None, ci_high=None, se=None, p_value=None, reason=floor.reason,
                   note=f"{floor.note}: not tested, never significant, never an alert; "
                        f"{d.notes[-1]}")
    return out


def _metrics(overall: bool) -> list[MetricDef]:
    """The metrics compared: every one with units (F1 is a function of two of them); metrics
    defined overall only (rejected input lines) on all engines alone."""
    return [m for m in METRICS if m.kind != "f1" and (overall or not m.overall_only)]


def _rows(family: str, pairs: list[tuple[Label, Label, Sides, Sides]]) -> list[dict[str, Any]]:
    rows = []
    for side_a, side_b, sa, sb in pairs:
        for m in _metrics(side_a.engine == ALL):
            fa, fb = sa.get(m.name, side_a.engine), sb.get(m.name, side_b.engine)
            if fa is None and fb is None:
                continue  # the metric has no units on either side (its input is absent)
            row = {"family": family, "metric": m.name, "unit": m.unit,
                   "engine_a": side_a.engine, "engine_b": side_b.engine,
                   "period_a": side_a.period, "period_b": side_b.period,
                   "codebook_a": side_a.codebook, "codebook_b": side_b.codebook,
                   "version_a": side_a.version, "version_b": side_b.version,
                   "higher_is_better": m.higher_is_better, "adjustment": ADJUSTMENT}
            row.update(compare_pair(m, fa, fb))
            rows.append(row)
    return rows


def _adjust(rows: list[dict[str, Any]], alpha: float) -> None:
    """Holm-adjusted p-values within each family of tests: one metric's comparisons of one
    kind on this date × codebook (e.g. dead_rate of every engine against the previous date),
    and ``significant`` at ``alpha``. ``adjustment`` says so, with the family's size."""
    families: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        families.setdefault((r["family"], r["metric"]), []).append(r)
    for fam in families.values():
        adjusted = holm([np.nan if r.get("p_value") is None else r["p_value"] for r in fam])
        tests = int((~np.isnan(adjusted)).sum())
        for r, p in zip(fam, adjusted, strict=True):
            r["p_adjusted"] = None if np.isnan(p) else float(p)
            r["significant"] = None if np.isnan(p) else bool(p < alpha)
            r["adjustment"] = f"{ADJUSTMENT} ({tests} tests: family × metric)"


def window(date: str, days: int) -> list[str]:
    """The ``days`` dates before ``date``, oldest first."""
    d = Date.fromisoformat(date)
    return [(d - timedelta(days=k)).isoformat() for k in range(days, 0, -1)]


def compare(
    current: pa.Table,
    date: str,
    version: str,
    *,
    history: dict[str, pa.Table] | None = None,
    codebooks: dict[str, pa.Table] | None = None,
    baseline_days: int = BASELINE_DAYS,
    engines: list[str] | None = None,
    alpha: float = ALPHA,
    vs_date: str | None = None,
) -> pa.Table:
    """Every comparison of one date × codebook.

    ``history``: {earlier date: its ``comparison_units``} under the same codebook (absent dates
    are simply missing); ``codebooks``: {other version: its units on this date}. ``engines``
    restricts the engines compared (default: all on this date). ``vs_date`` names the date of
    ``vs_previous_date`` (default: the latest date of ``history``)."""
    history = dict(sorted((history or {}).items()))
    here = Sides.of([current])
    names = here.engines() if engines is None else [e for e in here.engines() if e in engines]
    # all engines pooled; with an engine filter, only the engines asked for (no pool of them)
    engine_sides = [*names, ALL] if engines is None else names
    rows: list[dict[str, Any]] = []

    pairs = [(Label(a, date, version), Label(b, date, version), here, here)
             for a, b in itertools.combinations(names, 2)]
    rows += _rows("engine_vs_engine", pairs)

    earlier = [d for d in history if d < date]
    previous = vs_date if vs_date is not None else (earlier[-1] if earlier else None)
    if previous is not None and previous in history:
        prev = Sides.of([history[previous]])
        rows += _rows("vs_previous_date",
                      [(Label(e, date, version), Label(e, previous, version), here, prev)
                       for e in engine_sides])
    if baseline_days > 0:
        days = [d for d in window(date, baseline_days) if d in history]
        if days:
            base = Sides.of([history[d] for d in days])
            period = days[0] if len(days) == 1 else f"{days[0]}..{days[-1]}"
            rows += _rows("vs_baseline",
                          [(Label(e, date, version), Label(e, period, version), here, base)
                           for e in engine_sides])
    for other, table in sorted((codebooks or {}).items()):
        rows += _rows("vs_codebook",
                      [(Label(e, date, version), Label(e, date, other), here, Sides.of([table]))
                       for e in engine_sides])
    if baseline_days > 0:
        pool = {d: history[d] for d in window(date, baseline_days) if d in history}
    else:
        pool = {}
    rows += _version_rows({**pool, date: current}, date, version, engine_sides)
    _adjust(rows, alpha)
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def _version_rows(tables: dict[str, pa.Table], date: str, codebook: str,
                  engine_sides: list[str]) -> list[dict[str, Any]]:
    """The ``vs_version`` rows: each system_version answered on ``date`` against every other
    version of ``tables`` ({date: comparison_units}, this date and the window before it), per
    engine that answered with both; none unless there are two versions."""
    tables = {d: t for d, t in tables.items() if "system_version" in t.column_names}
    days: dict[str, list[str]] = {}
    for d, table in sorted(tables.items()):
        for v in sorted({v for v in table.column("system_version").to_pylist() if v}):
            days.setdefault(v, []).append(d)
    today = sorted(v for v, ds in days.items() if date in ds)
    if len(days) < 2 or not today:
        return []
    sides = {v: Sides.of([t.filter(pc.equal(t.column("system_version"), v))
                          for d, t in sorted(tables.items()) if d in ds])
             for v, ds in days.items()}

    def period(v: str) -> str:
        ds = days[v]
        return ds[0] if len(ds) == 1 else f"{ds[0]}..{ds[-1]}"

    pairs = []
    for va in today:
        for vb in sorted(days):
            if vb == va or (vb in today and vb < va):
                continue  # two versions of this date: one row, the first sorted as side a
            both = set(sides[va].engines()) & set(sides[vb].engines())
            pairs += [(Label(e, period(va), codebook, va), Label(e, period(vb), codebook, vb),
                       sides[va], sides[vb])
                      for e in engine_sides if e == ALL or e in both]
    return _rows("vs_version", pairs)


def history(derived: Any, date: str, version: str, days: int) -> dict[str, pa.Table]:
    """{date: comparison_units} of the dates written under ``version`` in the ``max(days,
    PREVIOUS_DAYS)`` days before ``date`` (a date not written is left out)."""
    out = {}
    for d in window(date, max(days, PREVIOUS_DAYS)):
        table = units.read(derived, d, version)
        if table is not None:
            out[d] = table
    return out


def earlier_codebooks(derived: Any, date: str, version: str,
                      versions: list[str]) -> dict[str, pa.Table]:
    """{version: comparison_units on ``date``} of the versions sorted before ``version``."""
    out = {}
    for v in sorted(versions):
        if v < version:
            table = units.read(derived, date, v)
            if table is not None:
                out[v] = table
    return out


def read(derived: Any, date: str, version: str) -> pa.Table:
    """The written ``comparisons`` of one date × codebook (raises naming the partition when
    it is not materialized)."""
    return parquet_io.read_partition(derived, "comparisons",
                                     {"observation_date": date, "codebook": version})
