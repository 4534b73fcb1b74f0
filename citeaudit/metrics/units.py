"""The units every metric is computed from: their columns, the levels they are grouped by,
and the resolved units of a row as arrays (shared by :mod:`compute` and :mod:`reference`)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pyarrow as pa

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
