"""Rates with honest intervals: Wilson, design-weighted Hájek ratio, cluster bootstrap.

Every function here is pure (no I/O, no global state) and returns an :class:`Interval`.
The rule of the project holds here too: a rate needs a denominator. With no units the
estimate and both bounds are ``None`` -- never 0 -- and unresolved units are never folded
into a rate; :func:`rate_row` reports them beside it.

Answers are sampled with known inclusion probabilities, so weighted estimates use the
design weight ``w = 1 / inclusion_prob``.
"""

from __future__ import annotations

from citeaudit.stats._common import Interval
from citeaudit.stats.bootstrap import cluster_bootstrap, f1_cluster_bootstrap
from citeaudit.stats.design_wilson import (
    cluster_design_effect,
    hajek_wilson,
    kish_effective_size,
)
from citeaudit.stats.hajek import HajekBatch, hajek_ratio, hajek_ratio_batch
from citeaudit.stats.rows import rate_row
from citeaudit.stats.wilson import wilson, wilson_bounds

__all__ = [
    "HajekBatch",
    "Interval",
    "cluster_bootstrap",
    "cluster_design_effect",
    "f1_cluster_bootstrap",
    "hajek_ratio",
    "hajek_ratio_batch",
    "hajek_wilson",
    "kish_effective_size",
    "rate_row",
    "wilson",
    "wilson_bounds",
]
