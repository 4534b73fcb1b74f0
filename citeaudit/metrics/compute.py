"""The ``metrics`` table: one row per (metric, stratum) with counts, unresolved and interval.

Steps: each metric's SQL file selects its *units* (a citation, a pair, a claim, a tuple, an
answer) with the answer's strata and ``y`` (1/0 for a rate, a number for a mean, NULL when
unresolved); DuckDB counts them per stratum and margin (``count_metric_strata.sql``); then
:mod:`citeaudit.stats` gives each row its estimate and 95% interval. The units stay in a DuckDB
table (spilled to disk past ``MEMORY_LIMIT``); only the resolved units' codes, weights and y
come to Python, in record batches, so the step's memory is about 40 bytes a resolved unit
plus DuckDB's limit (the in-memory path it replaced, same table, is kept as the tests'
reference, ``tests/metrics/reference_metrics.py``):

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

Unresolved units never enter a numerator or a denominator; they are counted beside. Each row
has a ``verdict``: ``estimated`` (an estimate; ``reason`` ``no_interval`` when its variance
cannot be estimated, one query, with a note) or ``unresolved`` (no estimate; ``reason``
``no_resolved_units`` when every unit is unresolved, ``no_units`` when the inputs are there
but hold no unit, ``input_missing`` when an input table is absent: one row and no numbers).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import duckdb
import numpy as np
import pyarrow as pa

from citeaudit import duck
from citeaudit.metrics import inputs
from citeaudit.metrics.definitions import METRICS, MetricDef
from citeaudit.metrics.units import GROUP_KEYS, UNIT_SCHEMA, Units, sorted_units
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
MARGINS = ("overall", "engine", "domain", "stratum")
ALL = "all"

METRICS_SCHEMA = pa.schema(
    [
        ("metric", pa.string()),
        ("margin", pa.string()),
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
        ("verdict", pa.string()),
        ("reason", pa.string()),
        ("note", pa.string()),
        # the full-support rate of the drawn review sample's frame, design-based: human-only
        # and prediction-powered beside it (citeaudit.support.sample.ppi_rates)
        ("sample_estimate", pa.float64()),
        ("sample_ci_low", pa.float64()),
        ("sample_ci_high", pa.float64()),
        ("ppi_estimate", pa.float64()),
        ("ppi_ci_low", pa.float64()),
        ("ppi_ci_high", pa.float64()),
        ("ppi_lambda", pa.float64()),
        ("ppi_width_ratio", pa.float64()),
        ("n_human", pa.int64()),
        ("n_graded", pa.int64()),
        ("ppi_grader", pa.string()),
        ("ppi_reason", pa.string()),
        ("ppi_note", pa.string()),
    ]
)
PPI_METRIC = "full_support_rate"
# The other rates that rest on people's support labels, and why a review sample of pairs gives
# them no design-based (nor prediction-powered) estimate: their ppi_reason is 'not_a_pair_rate'
# on the dates a sample was drawn (docs/graders.md#which-rates-get-ppi).
_PRECISION_WHY = ("a partial pair counts when its claim's citations together fully support "
                  "it: that depends on the claim's other citations, which a sample of pairs "
                  "does not observe (a sample of whole claims would)")
_CLAIM_WHY = ("a claim-grain rate (a claim's citations together): the review sample draws "
              "pairs, not claims")
NOT_A_PAIR_RATE = {
    "citation_precision": _PRECISION_WHY,
    "liu_citation_precision": _PRECISION_WHY,
    "citation_recall": _CLAIM_WHY,
    "liu_citation_recall": _CLAIM_WHY,
    "liu_citation_f1": "its components have no sample estimate (precision: " + _PRECISION_WHY
                       + "; recall: " + _CLAIM_WHY + ")",
    "expertqa_attribution": "the experts' own claim-level labels of imported answers: the "
                            "review sample draws the pipeline's graded pairs",
}


UNIT_COLUMNS = [c for c in UNIT_SCHEMA.names if c != "unit_id"]
KEY_COLUMNS = ("metric", "engine", "domain", "risk_band")
# DuckDB's share of the step: units, counts and codes stay within it, spilling beyond it
MEMORY_LIMIT = "256MB"
READ_ROWS = 262_144
# A path to the intervals' inputs: (counts rows, {metric: missing inputs}, resolved units)
# of the views registered on a connection (see :func:`compute`).
UnitsPath = Callable[[duckdb.DuckDBPyConnection, set[str]],
                     tuple[list[dict[str, Any]], dict[str, list[str]], Any]]


@dataclass
class MetricsResult:
    """The metrics table, and the metrics that could not be computed with the missing inputs."""

    table: pa.Table
    missing: dict[str, list[str]] = field(default_factory=dict)
    inputs: dict[str, Path] = field(default_factory=dict)


def select_units(con: duckdb.DuckDBPyConnection, names: set[str]) -> dict[str, list[str]]:
    """Fill the DuckDB table ``metric_units`` with the units of every metric whose inputs are
    registered, metric after metric (its rowid keeps that order); return {metric: missing
    inputs}. The units never leave DuckDB: only their counts and codes do; each metric's units
    are sorted by every column (``units.UNIT_ORDER``), so a rerun gives the same bytes."""
    duck.execute(con, "metrics/create_metric_units")
    relations, missing = sorted_units(con, names)
    for units in relations:
        units.select(", ".join(UNIT_COLUMNS)).insert_into("metric_units")
    return missing


class _Groups:
    """Positions of the resolved units of each key (ascending, i.e. in unit order): one stable
    sort of the units by their integer key, cut where the key changes."""

    def __init__(self, keys: np.ndarray) -> None:
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
        cuts = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1
        starts, ends = np.r_[0, cuts], np.r_[cuts, ordered.size]
        self._order = order.astype(np.int32 if order.size < 2**31 else np.int64)
        self._at = {int(k): (int(a), int(b))
                    for k, a, b in zip(ordered[starts[starts < ordered.size]],
                                       starts, ends, strict=False)}

    def get(self, key: int | None) -> np.ndarray | None:
        at = self._at.get(key) if key is not None else None
        return None if at is None else self._order[at[0]:at[1]]


# the distinct values a counts row reports, and the code column each is counted on
_DISTINCT = {"n_answers": "answer", "n_queries": "query", "n_domains": "domain"}


class _Resolved(NamedTuple):
    """The resolved units of every metric as arrays; per level, their groups and the number
    of distinct answers, queries and domains of each group."""

    arrays: Units
    groups: dict[str, _Groups]
    distinct: dict[str, dict[str, dict[int, int]]]
    codes: dict[str, dict[Any, int]]

    def key(self, level: str, row: dict[str, Any]) -> int | None:
        """The integer key of a row's group at ``level`` (None: no resolved unit has it)."""
        key = 0
        for k in GROUP_KEYS[level]:
            code = self.codes[k].get(row[k])
            if code is None:
                return None
            key = key * len(self.codes[k]) + code
        return key

    def indices(self, level: str, row: dict[str, Any]) -> np.ndarray | None:
        """Positions of the resolved units of one counts row (or of the same keys)."""
        key = self.key(level, row)
        return None if key is None else self.groups[level].get(key)

    def count(self, level: str, row: dict[str, Any], what: str) -> int:
        """Distinct answers, queries or domains (``n_answers``...) of a row's resolved units."""
        key = self.key(level, row)
        return 0 if key is None else self.distinct[level][what].get(key, 0)


def _distinct_per_key(keys: np.ndarray, values: np.ndarray, null: int | None
                      ) -> dict[int, int]:
    """{key: number of distinct non-null values among its units} (count(DISTINCT value) per
    group): the distinct (key, value) pairs by hashing, then pairs per key by counting."""
    if null is not None:
        keep = values != null
        keys, values = keys[keep], values[keep]
    if keys.size == 0:
        return {}
    width = int(values.max()) + 1
    # imported at the call: Dagster's UI, daemon and code server load this module and never
    # need it
    import pandas as pd
    pairs = pd.unique(keys * width + values.astype(np.int64))
    n = np.bincount(pairs // width)
    present = np.flatnonzero(n)
    return dict(zip(present.tolist(), n[present].tolist(), strict=True))


def _columns(con: duckdb.DuckDBPyConnection) -> dict[str, np.ndarray]:
    """The resolved units' columns as numpy arrays in unit order (doubles stay doubles; codes
    become int32, labels the intervals only compare), read in record batches."""
    reader = con.sql(duck.sql_text("metrics/select_resolved_unit_codes")).to_arrow_reader(
        READ_ROWS)
    parts: dict[str, list[np.ndarray]] = {name: [] for name in reader.schema.names}
    for batch in reader:
        for name, column in zip(batch.schema.names, batch.columns, strict=True):
            dtype = (np.int64 if name == "seq" else
                     np.float64 if name in ("inclusion_prob", "y") else np.int32)
            parts[name].append(np.asarray(column.to_numpy(zero_copy_only=False), dtype=dtype))
    chunks = parts.pop("seq")
    seq = np.concatenate(chunks) if chunks else np.empty(0, np.int64)
    # the batches usually arrive in unit order already; put them in it when they do not
    order = None if np.all(seq[1:] > seq[:-1]) else np.argsort(seq, kind="stable")
    del seq
    out = {}
    for name in list(parts):  # one column at a time, each batch list freed once joined
        chunks = parts.pop(name)
        joined = np.concatenate(chunks) if chunks else np.empty(0)
        out[name] = joined if order is None else joined[order]
        del chunks, joined
    return out


def _resolved(con: duckdb.DuckDBPyConnection) -> _Resolved:
    """Codes and arrays of the resolved units (y not null, not NaN), in unit order.

    Every code is the rank of its value's first appearance among the resolved units, so the
    query and domain codes are the cluster labels the intervals have always been given."""
    duck.execute(con, "metrics/create_unit_codes")
    codes: dict[str, dict[Any, int]] = {k: {} for k in (*KEY_COLUMNS, "query_id", "answer_id")}
    for r in duck.query(con, "metrics/select_unit_code_values").to_pylist():
        codes[r["key"]][r["value"]] = r["code"]
    col = _columns(con)
    ip = col.pop("inclusion_prob")
    arrays = Units(col.pop("y"), np.where(np.isnan(ip), np.nan, 1.0 / ip),
                    col.pop("query"), col["domain"])
    answer = col.pop("answer")
    del ip
    nulls = {"answer": codes["answer_id"].get(None), "query": codes["query_id"].get(None),
             "domain": codes["domain"].get(None)}
    values = {"answer": answer, "query": arrays.query, "domain": arrays.domain}
    groups, distinct = {}, {}
    for level, keys in GROUP_KEYS.items():
        key = np.zeros(arrays.y.size, dtype=np.int64)
        for k in keys:
            key = key * len(codes[k]) + col[k].astype(np.int64)
        groups[level] = _Groups(key)
        distinct[level] = {what: _distinct_per_key(key, values[v], nulls[v])
                           for what, v in _DISTINCT.items()}
    return _Resolved(arrays, groups, distinct, codes)


def _interval(m: MetricDef, row: dict[str, Any], group: Units | None,
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


def _design_effects(resolved: _Resolved) -> dict[str, float]:
    """{metric: design effect of clustering by query}, estimated once over all the resolved
    units of each weighted rate and applied to every row of it (a generalized design effect):
    a row's own few failures say little about how outcomes cluster, and one design effect per
    metric keeps each row's effective size fixed by its design, whatever its k."""
    out = {}
    for m in METRICS:
        if not m.weighted or m.kind != "rate":
            continue
        idx = resolved.indices("overall", {"metric": m.name})
        if idx is None or len(idx) == 0:
            continue
        g = resolved.arrays.take(idx)
        out[m.name] = cluster_design_effect(g.y, g.w, g.query)
    return out


def _domain_bootstrap(m: MetricDef, row: dict[str, Any], group: Units | None,
                      reps: int, seed: int) -> Interval | None:
    """The sensitivity interval: whole domains resampled (weighted rows over >= 2 domains)."""
    if group is None or not m.weighted or m.kind != "rate" or int(row["n_domains"]) < 2:
        return None
    return cluster_bootstrap(group.y, group.w, group.domain, reps=reps, seed=seed)


NO_INTERVAL_NOTE = "no interval (1 cluster): the variance cannot be estimated from one query"


def _verdict(iv: Interval) -> tuple[str, str | None, list[str]]:
    """(verdict, reason, notes) of a computed interval: ``estimated`` with no reason, or with
    reason ``no_interval`` and its explanation first among the notes."""
    if iv.estimate is not None and (iv.low is None or iv.high is None):
        return "estimated", "no_interval", [NO_INTERVAL_NOTE, *iv.notes]
    return "estimated", None, list(iv.notes)


def _f1_rows(m: MetricDef, rows: list[dict[str, Any]], resolved: _Resolved,
             reps: int, seed: int) -> list[dict[str, Any]]:
    """One F1 row per overall, engine and domain row that both components computed (the paper
    reports engines and the pool; full strata are left to the components, whose bootstrap by
    query per stratum would cost more than it tells)."""
    prec_name, rec_name = m.components
    by_key = {(r["metric"], r["margin"], r["engine"], r["domain"], r["risk_band"]): r
              for r in rows}
    out = []
    for r in rows:
        if r["metric"] != prec_name or r.get("estimate") is None or r["margin"] == "stratum":
            continue
        key = (r["margin"], r["engine"], r["domain"], r["risk_band"])
        rec = by_key.get((rec_name, *key))
        if rec is None or rec.get("estimate") is None:
            continue
        sides = []
        for name in (prec_name, rec_name):
            idx = resolved.indices(r["margin"], {**r, "metric": name})
            g = resolved.arrays.take(idx)
            sides.append((g.y, g.w, g.query))
        iv = f1_cluster_bootstrap(sides[0], sides[1], reps=reps, seed=seed)
        verdict, reason, notes = _verdict(iv)
        notes.insert(0 if reason is None else 1,
                     f"precision {r['estimate']:.4f} of {r['denominator']} citations, recall "
                     f"{rec['estimate']:.4f} of {rec['denominator']} claims")
        out.append({
            "metric": m.name, "margin": r["margin"], "engine": r["engine"],
            "domain": r["domain"], "risk_band": r["risk_band"], "unit": m.unit,
            "numerator": None, "denominator": None,
            "unresolved": int(r["unresolved"]) + int(rec["unresolved"]),
            "estimate": iv.estimate, "ci_low": iv.low, "ci_high": iv.high,
            "method": iv.method, "weighting": r["weighting"], "cluster_by": "query",
            "n_clusters": None, "n_answers": max(r["n_answers"], rec["n_answers"]),
            "verdict": verdict, "reason": reason, "note": "; ".join(notes),
        })
    return out


def _no_unit_rows(computed: set[str], missing: dict[str, list[str]]) -> list[dict]:
    """One overall row for each metric whose inputs exist but hold no unit at all."""
    rows = []
    for m in METRICS:
        if m.name in computed or m.name in missing:
            continue
        rows.append({
            "metric": m.name, "margin": "overall", "engine": ALL, "domain": ALL,
            "risk_band": ALL, "unit": m.unit, "denominator": 0, "unresolved": 0,
            "numerator": 0.0, "verdict": "unresolved", "reason": "no_units",
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
            "metric": m.name, "margin": "overall", "engine": ALL, "domain": ALL,
            "risk_band": ALL, "unit": m.unit, "verdict": "unresolved",
            "reason": "input_missing",
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
    units: UnitsPath | None = None,
) -> MetricsResult:
    """The metrics rows for the views registered in ``con`` (see :func:`inputs.register`).

    The units stay in DuckDB, counted and coded there; only the resolved units' numbers come
    to Python. ``units`` replaces that path by another giving the same counts rows, missing
    inputs and resolved units (the tests' in-memory reference: units as one Arrow table, a
    pandas frame): same table, more memory."""
    resolved: _Resolved | Any
    if units is not None:
        counts, missing, resolved = units(con, names)
    else:
        missing = select_units(con, names)
        counts = duck.query(con, "metrics/count_metric_strata").to_pylist()
        resolved = _resolved(con)
        duck.execute(con, "metrics/drop_metric_units")
    by_name = {m.name: m for m in METRICS}
    deffs = _design_effects(resolved)
    rows: list[dict[str, Any]] = []
    for row in counts:
        m = by_name[row["metric"]]
        level = row["margin"]
        row.update({what: resolved.count(level, row, what) for what in _DISTINCT})
        if m.overall_only and level != "overall":
            continue
        out: dict[str, Any] = {k: row[k] for k in ("metric", "margin", "engine", "domain",
                                                    "risk_band", "denominator", "unresolved")}
        out.update(unit=m.unit, breakdown=row["breakdown"], n_answers=row["n_answers"])
        if m.overall_only:
            out.update(engine=ALL, domain=ALL, risk_band=ALL)
        den = int(row["denominator"])
        out["numerator"] = float(row["total"]) if den else 0.0
        if den == 0:
            out.update(verdict="unresolved", reason="no_resolved_units", method=None,
                       weighting=None,
                       note="every unit is unresolved: no rate")
            rows.append(out)
            continue
        idx = resolved.indices(level, row)
        group = resolved.arrays.take(idx) if idx is not None else None
        iv, weighting, cluster_by, n_clusters = _interval(m, row, group, deffs.get(m.name))
        boot = _domain_bootstrap(m, row, group, reps, seed)
        verdict, reason, notes = _verdict(iv)
        if boot is not None:
            notes.append(f"domain bootstrap: {boot.notes[0]}" if boot.notes else
                         "domain bootstrap")
        out.update(
            estimate=iv.estimate, ci_low=iv.low, ci_high=iv.high, method=iv.method,
            weighting=weighting, cluster_by=cluster_by, n_clusters=n_clusters,
            sum_weights=iv.sum_weights, verdict=verdict, reason=reason,
            note="; ".join(notes) or None,
            domain_bootstrap_low=boot.low if boot else None,
            domain_bootstrap_high=boot.high if boot else None,
        )
        rows.append(out)
    for m in METRICS:
        if m.kind == "f1" and m.name not in missing:
            rows += _f1_rows(m, rows, resolved, reps, seed)
    rows += _no_unit_rows({r["metric"] for r in rows}, missing)
    rows += _missing_rows(missing, date, version)
    _ppi_columns(con, names, rows)
    order = {m.name: i for i, m in enumerate(METRICS)}
    rows.sort(key=lambda r: (order[r["metric"]], MARGINS.index(r["margin"]), r["engine"],
                             r["domain"], r["risk_band"]))
    table = pa.Table.from_pylist(rows, schema=METRICS_SCHEMA)
    return MetricsResult(table, missing)


def _ppi_columns(con: duckdb.DuckDBPyConnection, names: set[str],
                 rows: list[dict[str, Any]]) -> None:
    """Fill the ``sample_*`` / ``ppi_*`` columns of the full-support rate's rows from the
    drawn review sample and the grader labels (only the margins the sample's strata nest in:
    overall, and engine or domain when the sample is stratified by it)."""
    from citeaudit.support.sample import ppi_rates

    if not {"review_sample", "grader_judgments"} <= names:
        return
    review = con.sql("SELECT * FROM review_sample").to_arrow_table()
    graded = con.sql("SELECT * FROM grader_judgments").to_arrow_table()
    drawn = [g for g in review.column("grader").to_pylist() if g]
    grader = drawn[0] if drawn else None
    if grader is not None:
        for row in rows:
            why = NOT_A_PAIR_RATE.get(row["metric"])
            if why and row["margin"] in ("overall", "engine", "domain"):
                row.update(ppi_reason="not_a_pair_rate",
                           ppi_note=f"no estimate from the review sample: {why}")
    version = next((v for g, v in zip(graded.column("grader").to_pylist(),
                                       graded.column("grader_version").to_pylist(),
                                       strict=True) if g == grader), None)
    by_key = {(r["margin"], r["engine"], r["domain"]): r for r in rows
              if r["metric"] == PPI_METRIC and r["margin"] in ("overall", "engine", "domain")}
    for p in ppi_rates(review, graded, grader or ""):
        row = by_key.get((p["margin"], p["engine"], p["domain"]))
        if row is None:
            continue
        res = p["result"]
        notes = [p["note"]] if p.get("note") else []
        if p.get("unresolved"):
            notes.append(f"{p['unresolved']} drawn pairs people judged unresolved: outside "
                         "the rate's denominator (a ratio estimator of the rate among "
                         "resolvable pairs)")
        if p.get("missing"):
            notes.append(f"{p['missing']} drawn pairs not labelled yet (missing at random "
                         "within their stratum assumed)")
        if p.get("outside"):
            notes.append(f"{p['outside']} pairs labelled outside the sample: shown in "
                         "review_sample, not used here")
        if version:
            notes.insert(0, f"grader {grader} {version}")
        row.update(ppi_grader=grader, ppi_reason=p["reason"],
                   ppi_note="; ".join(notes) or None)
        if res is not None:
            row.update(sample_estimate=res.human_estimate, sample_ci_low=res.human_low,
                       sample_ci_high=res.human_high, ppi_estimate=res.estimate,
                       ppi_ci_low=res.low, ppi_ci_high=res.high, ppi_lambda=res.lam,
                       ppi_width_ratio=res.width_ratio, n_human=res.n, n_graded=res.N)


def compute_partition(derived: Path, date: str, version: str, *,
                      units: UnitsPath | None = None, **kwargs: Any) -> MetricsResult:
    """Compute the metrics of one date × codebook from whatever inputs are on disk.

    DuckDB works within ``MEMORY_LIMIT``, spilling to a private temporary folder beyond it
    (another ``units`` path, see :func:`compute`, runs as it always did, without a limit)."""
    tables = inputs.available(derived, date, version)
    with tempfile.TemporaryDirectory(prefix="citeaudit-metrics-") as spill:
        con = duck.connect(isolated=True)  # the spill sets instance-wide limits
        try:
            if units is None:
                duck.spill_to_disk(con, MEMORY_LIMIT, spill)
            names = inputs.register(con, inputs.local_copies(tables, Path(spill)))
            result = compute(con, names, date, version, units=units, **kwargs)
        finally:
            con.close()
    result.inputs = tables
    return result


def breakdown(row: dict[str, Any]) -> dict[str, int]:
    """The per-category unit counts of a metrics row (empty when none)."""
    return json.loads(row["breakdown"]) if row.get("breakdown") else {}
