"""The units every metric is computed from: their columns, the levels they are grouped by,
and the resolved units of a row as arrays (shared by :mod:`compute` and the tests' in-memory
reference, ``tests/metrics/reference_metrics.py``)."""

from __future__ import annotations

from typing import NamedTuple

import duckdb
import numpy as np
import pyarrow as pa

from citeaudit import duck
from citeaudit.metrics.definitions import METRICS

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

GROUP_KEYS = {
    "overall": ["metric"],
    "engine": ["metric", "engine"],
    "domain": ["metric", "domain"],
    "stratum": ["metric", "engine", "domain", "risk_band"],
}


class Units(NamedTuple):
    """Resolved units of one row as arrays: y, design weight, query and domain codes."""

    y: np.ndarray
    w: np.ndarray
    query: np.ndarray
    domain: np.ndarray

    def take(self, idx: np.ndarray) -> Units:
        return Units(self.y[idx], self.w[idx], self.query[idx], self.domain[idx])


# Every column, unit_id last: a join that spills, or runs on another number of threads, may emit
# rows in another order, and the float sums and the cluster bootstrap's draws follow the unit
# order, so without this sort a rerun could differ in the last bits (or, for bootstrap bounds,
# by Monte Carlo noise).
UNIT_ORDER = ", ".join([c for c in UNIT_SCHEMA.names if c != "unit_id"] + ["unit_id"])


def sorted_units(con: duckdb.DuckDBPyConnection, names: set[str]
                 ) -> tuple[list[duckdb.DuckDBPyRelation], dict[str, list[str]]]:
    """The units of every unit-based metric whose inputs are registered, one relation per
    metric in ``METRICS`` order, each sorted by ``UNIT_ORDER``; and {metric: missing inputs}."""
    relations, missing = [], {}
    for m in METRICS:
        absent = [t for t in m.inputs if t not in names]
        if absent:
            missing[m.name] = absent
            continue
        if m.kind == "f1":
            continue
        units = con.sql(duck.sql_text(m.sql)).select(", ".join(UNIT_SCHEMA.names))
        relations.append(units.order(UNIT_ORDER))
    return relations, missing
