"""The ``alerts`` table: every codebook alert rule that fires, with the comparison it fired on.

A rule (``alerts:`` in the codebook, :class:`citeaudit.codebook.AlertRule`) fires on a
``comparisons`` row when the metric, engine and family match, the row is ``estimated``, its
p-value, Holm-adjusted over every comparison the rule watches (its family: the estimated rows
its metric, engine and family select), is below the rule's ``alpha``, its difference points in
the rule's direction, and the difference is at least ``min_effect`` in size. A rule watching
one metric of one engine against the previous date is one test; ``metric: '*'`` over every
engine is dozens, and the adjustment keeps the chance of any false alarm at ``alpha``.
"worse" reads the metric's direction (a higher dead rate is worse, a higher existence rate
better). An unresolved row
never fires an alert and never clears one: it is not evidence of a change either way.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from citeaudit.codebook import AlertRule, Codebook, CodebookError
from citeaudit.comparisons.compute import SCHEMA as COMPARISONS_SCHEMA
from citeaudit.metrics.definitions import METRICS
from citeaudit.stats.difference import holm

# The comparison columns an alert row repeats keep the comparisons table's types.
_COMPARED = ("family", "metric", "engine_a", "engine_b", "period_a", "period_b", "codebook_a",
             "codebook_b", "version_a", "version_b", "estimate_a", "estimate_b", "difference",
             "ci_low", "ci_high", "p_adjusted")
SCHEMA = pa.schema(
    [("rule", pa.string()), ("severity", pa.string()), ("direction", pa.string()),
     ("min_effect", pa.float64()), ("alpha", pa.float64())]
    + [COMPARISONS_SCHEMA.field(name) for name in _COMPARED]
    + [("tests", pa.int64()), ("paired_queries", pa.int64()), ("detail", pa.string())]
)


def check_rules(book: Codebook) -> None:
    """Raise :class:`CodebookError` (file, key, fix) when a rule names no comparable metric."""
    known = [m.name for m in METRICS if m.kind != "f1"]
    for i, rule in enumerate(book.alerts):
        if rule.metric != "*" and rule.metric not in known:
            raise CodebookError(f"{book.path}: alerts[{i}].metric: {rule.metric!r} is not a "
                                f"metric that is compared; use one of {', '.join(known)} "
                                "or '*'")


def _engine_matches(rule: AlertRule, row: dict[str, Any]) -> bool:
    if rule.versus:
        return {row["engine_a"], row["engine_b"]} == {rule.engine, rule.versus}
    if rule.engine == "*":
        return True
    return rule.engine in (row["engine_a"], row["engine_b"])


def _direction_matches(rule: AlertRule, row: dict[str, Any]) -> bool:
    d = row["difference"]
    if rule.direction == "either":
        return d != 0
    if rule.direction in ("increase", "decrease"):
        return d > 0 if rule.direction == "increase" else d < 0
    worse = d < 0 if row["higher_is_better"] else d > 0
    better = d > 0 if row["higher_is_better"] else d < 0
    return worse if rule.direction == "worse" else better


def watches(rule: AlertRule, row: dict[str, Any]) -> bool:
    """Whether ``row`` is one of the comparisons ``rule`` watches (its family of tests)."""
    return (rule.metric in ("*", row["metric"]) and rule.family in ("*", row["family"])
            and _engine_matches(rule, row) and row["verdict"] == "estimated"
            and row.get("p_value") is not None)


def fires(rule: AlertRule, row: dict[str, Any], p_rule: float) -> bool:
    """Whether ``rule`` fires on a watched row whose p-value, Holm-adjusted over every row the
    rule watches, is ``p_rule``."""
    d = row["difference"]
    return p_rule < rule.alpha and _direction_matches(rule, row) and abs(d) >= rule.min_effect


def _detail(row: dict[str, Any]) -> str:
    a = row["engine_a"] if row["family"] == "engine_vs_engine" else row["period_a"]
    b = row["engine_b"] if row["family"] == "engine_vs_engine" else row["period_b"]
    if row["family"] == "vs_codebook":
        a, b = row["codebook_a"], row["codebook_b"]
    if row["family"] == "vs_version":
        a, b = f"version {row['version_a']}", f"version {row['version_b']}"
    who = "" if row["family"] == "engine_vs_engine" else f"{row['engine_a']}: "
    return (f"{who}{row['metric']} {row['estimate_a']:.3f} ({a}) vs {row['estimate_b']:.3f} "
            f"({b}), difference {row['difference']:+.3f} [{row['ci_low']:+.3f}, "
            f"{row['ci_high']:+.3f}], Holm p {row['p_adjusted']:.2g}, "
            f"{row['paired_queries']} paired queries")


def evaluate(rules: tuple[AlertRule, ...] | list[AlertRule], comparisons: pa.Table) -> pa.Table:
    """The ``alerts`` rows: one per rule and comparisons row it fires on, rules in codebook
    order, rows in table order."""
    out = []
    rows = comparisons.to_pylist()
    for rule in rules:
        watched = [r for r in rows if watches(rule, r)]
        adjusted = holm([r["p_value"] for r in watched])
        for row, p in zip(watched, adjusted, strict=True):
            if fires(rule, row, float(p)):
                out.append({
                    "rule": rule.name, "severity": rule.severity, "direction": rule.direction,
                    "min_effect": rule.min_effect, "alpha": rule.alpha,
                    **{k: row[k] for k in SCHEMA.names if k in row},
                    "p_adjusted": float(p), "tests": len(watched),
                    "detail": _detail({**row, "p_adjusted": float(p)}),
                })
    return pa.Table.from_pylist(out, schema=SCHEMA)
