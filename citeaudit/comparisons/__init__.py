"""Comparisons: what changed between engines, dates and codebooks, and whether it is real.
Writes ``comparison_units``, ``comparisons``, ``alerts`` and ``cited_domains``.

:mod:`units` reduces the metrics' units to per-query sums (``comparison_units``),
:mod:`compute` compares them (``comparisons``: paired by query, cluster-robust intervals of the
difference, Holm-adjusted p-values), :mod:`alerts` applies the codebook's alert rules
(``alerts``), :mod:`cli` is ``citeaudit compare``; :mod:`domains` is the per-domain view
(``cited_domains``: the cited sites per engine with their dead, changed and unsupported rates,
and the sources retrieved but never cited).
"""

from __future__ import annotations

from citeaudit.comparisons.alerts import evaluate
from citeaudit.comparisons.compute import BASELINE_DAYS, compare
from citeaudit.comparisons.units import query_sums

__all__ = ["BASELINE_DAYS", "compare", "evaluate", "query_sums"]
