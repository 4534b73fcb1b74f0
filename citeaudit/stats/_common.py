"""The shared result type and small helpers of :mod:`citeaudit.stats`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

Method = Literal["wilson", "hajek_linearized", "cluster_bootstrap", "hajek_wilson",
                 "f1_cluster_bootstrap"]


@dataclass(frozen=True)
class Interval:
    """A point estimate with a two-sided ``1 - alpha`` interval.

    ``n`` is the (unweighted) number of units in the denominator. ``sum_weights`` is the
    sum of design weights (an estimate of the population size) for weighted methods and
    ``None`` for Wilson. ``notes`` records anything a reader must know (collapsed strata,
    undefined variance, ...). ``estimate``/``low``/``high`` are ``None`` when undefined.
    """

    estimate: float | None
    low: float | None
    high: float | None
    n: int
    method: Method
    sum_weights: float | None = None
    alpha: float = 0.05
    se: float | None = None
    notes: tuple[str, ...] = ()


def _check_alpha(alpha: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")


def _label_codes(labels: Any, n: int) -> NDArray[np.intp]:
    """Integer codes 0..H-1 for stratum/cluster labels (scalars, or rows of tuples)."""
    arr = np.asarray(labels)
    if arr.shape[:1] != (n,):
        raise ValueError(f"labels have length {arr.shape[:1]}, expected {n}")
    if arr.ndim == 1:
        _, codes = np.unique(arr, return_inverse=True)
    else:
        _, codes = np.unique(arr.reshape(n, -1), axis=0, return_inverse=True)
    return np.asarray(codes, dtype=np.intp).reshape(-1)


def _weighted_inputs(y: Any, w: Any) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``y`` and ``w`` as flat float arrays of one length (raises if they differ)."""
    yy = np.asarray(y, dtype=np.float64).reshape(-1)
    ww = np.asarray(w, dtype=np.float64).reshape(-1)
    if yy.shape != ww.shape:
        raise ValueError(f"y and w differ in length: {yy.size} vs {ww.size}")
    return yy, ww


def _no_rate(method: Method, alpha: float) -> Interval:
    """The result for an empty denominator: no estimate and no interval, never 0."""
    return Interval(
        None, None, None, 0, method, sum_weights=0.0, alpha=alpha, notes=("n == 0: no rate",)
    )
