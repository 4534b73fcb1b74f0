"""Metrics: the rates an analyst reads, per stratum and margin, with numerator, denominator,
the unresolved count beside them and an honest interval. Writes ``metrics``.

:mod:`definitions` says what each metric counts, :mod:`inputs` finds the derived tables of a
date × codebook, :mod:`compute` builds the table.
"""

from __future__ import annotations

from citeaudit.metrics.compute import METRICS_SCHEMA, MetricsResult, compute, compute_partition
from citeaudit.metrics.definitions import BY_NAME, METRICS, MetricDef

__all__ = [
    "BY_NAME",
    "METRICS",
    "METRICS_SCHEMA",
    "MetricDef",
    "MetricsResult",
    "compute",
    "compute_partition",
]
