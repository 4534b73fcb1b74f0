"""Design-weighted Hájek ratio with a Taylor-linearization (stratified) interval."""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from citeaudit.stats._common import (
    Interval,
    _check_alpha,
    _label_codes,
    _no_rate,
    _weighted_inputs,
)


class HajekBatch(NamedTuple):
    """Arrays of length B (one entry per sample) from :func:`hajek_ratio_batch`."""

    estimate: NDArray[np.float64]
    low: NDArray[np.float64]
    high: NDArray[np.float64]
    se: NDArray[np.float64]
    sum_weights: NDArray[np.float64]
    df: int
    notes: tuple[str, ...]


def _collapse_singletons(codes: NDArray[np.intp]) -> tuple[NDArray[np.intp], list[str]]:
    """Pool every single-unit stratum into one pseudo-stratum; return new codes and notes."""
    counts = np.bincount(codes)
    lonely = counts == 1
    notes: list[str] = []
    if lonely.any() and counts.size > 1:
        k = int(lonely.sum())
        new_of_old = np.cumsum(~lonely) - 1  # keep non-singleton strata in order
        pooled = int((~lonely).sum())  # one extra code for the pooled singletons
        new_of_old[lonely] = pooled
        codes = new_of_old[codes]
        if k >= 2:
            notes.append(f"{k} single-unit strata collapsed into one pseudo-stratum")
        else:
            notes.append(
                "1 single-unit stratum: its residual is centred at the overall mean "
                "(lonely-PSU 'adjust' rule)"
            )
    return codes, notes


def _psu_strata(codes: NDArray[np.intp], clusters: Any, n: int
                ) -> tuple[NDArray[np.intp] | None, NDArray[np.intp]]:
    """(cluster code per unit or None, stratum code per primary sampling unit)."""
    if clusters is None:
        return None, codes
    ccodes = _label_codes(clusters, n)
    c = int(ccodes.max()) + 1
    pcodes = np.full(c, -1, dtype=np.intp)
    pcodes[ccodes] = codes
    if not (pcodes[ccodes] == codes).all():
        raise ValueError("a cluster spans several strata; clusters must nest in strata")
    return ccodes, pcodes


def hajek_ratio_batch(
    y: ArrayLike,
    w: ArrayLike,
    strata: Any = None,
    alpha: float = 0.05,
    dist: Literal["t", "normal"] = "t",
    clusters: Any = None,
) -> HajekBatch:
    """Vectorized :func:`hajek_ratio` for B samples sharing one stratum (and cluster) layout.

    ``y`` and ``w`` have shape (B, n) (or (n,), treated as B = 1); ``strata`` and
    ``clusters`` have length n. Needs n >= 1; with one unit (or one cluster) the variance is
    undefined and the bounds are NaN. Used by :func:`hajek_ratio` and by the coverage
    simulation, so both exercise the same code.
    """
    _check_alpha(alpha)
    yy = np.atleast_2d(np.asarray(y, dtype=np.float64))
    ww = np.atleast_2d(np.asarray(w, dtype=np.float64))
    ww = np.broadcast_to(ww, yy.shape)
    b, n = yy.shape
    if n == 0:
        raise ValueError("hajek_ratio_batch needs at least one unit; hajek_ratio handles n == 0")
    if not (np.isfinite(yy).all() and np.isfinite(ww).all() and (ww > 0).all()):
        raise ValueError("y must be finite and weights finite and > 0")
    codes = np.zeros(n, dtype=np.intp) if strata is None else _label_codes(strata, n)
    ccodes, codes = _psu_strata(codes, clusters, n)
    codes, notes = _collapse_singletons(codes)
    h = int(codes.max()) + 1
    n_h = np.bincount(codes, minlength=h).astype(np.float64)

    sw = ww.sum(axis=1)
    est = (ww * yy).sum(axis=1) / sw
    z = ww * (yy - est[:, None]) / sw[:, None]  # linearized residuals, sum to 0 per row
    if ccodes is not None:  # ultimate clusters: a cluster's residuals move together
        c = codes.size
        cflat = (np.arange(b)[:, None] * c + ccodes[None, :]).ravel()
        z = np.bincount(cflat, weights=z.ravel(), minlength=b * c).reshape(b, c)
        notes.append(f"{c} clusters (ultimate-cluster variance)")
    n_psu = codes.size
    flat = (np.arange(b)[:, None] * h + codes[None, :]).ravel()
    z_sum = np.bincount(flat, weights=z.ravel(), minlength=b * h).reshape(b, h)
    lonely = n_h == 1
    # centre within stratum; a lonely stratum is centred at the overall mean of z (= 0)
    z_mean = np.where(lonely, 0.0, z_sum / n_h)
    dev2 = (z - z_mean[:, codes]) ** 2
    ss = np.bincount(flat, weights=dev2.ravel(), minlength=b * h).reshape(b, h)
    factor = np.where(lonely, 1.0, n_h / np.maximum(n_h - 1.0, 1.0))
    var = (ss * factor).sum(axis=1)
    se = np.sqrt(var)

    df = n_psu - h
    if n_psu == 1:
        se = np.full(b, np.nan)
        notes.append("one unit or cluster: variance undefined, no interval")
    # imported at the call: Dagster's UI, daemon and code server load this module and never
    # need it
    from scipy import stats as _sp
    if dist == "t" and df >= 1:
        crit = float(_sp.t.ppf(1 - alpha / 2, df))
    else:
        crit = float(_sp.norm.ppf(1 - alpha / 2))
    low, high = est - crit * se, est + crit * se
    if ((yy >= 0) & (yy <= 1)).all():  # a proportion (or mean of [0,1] scores)
        low, high = np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)
    return HajekBatch(est, low, high, se, sw, df, tuple(notes))


def hajek_ratio(
    y: ArrayLike,
    w: ArrayLike,
    strata: Any = None,
    alpha: float = 0.05,
    dist: Literal["t", "normal"] = "t",
    clusters: Any = None,
) -> Interval:
    """Design-weighted (Hájek) ratio ``R = sum(w*y) / sum(w)`` with a linearized interval.

    ``y`` is 0/1 (a rate) or real; ``w`` are design weights ``1/inclusion_prob`` (> 0).
    Variance is the standard Taylor-linearization variance of a ratio estimator
    (Särndal, Swensson & Wretman 1992, *Model Assisted Survey Sampling*, §5.6-5.7; Wolter
    2007, ch. 6) under a stratified with-replacement approximation (no finite population
    correction, so it is slightly conservative when sampling fractions are large)::

        z_i = w_i * (y_i - R) / sum(w)
        V(R) = sum_h n_h / (n_h - 1) * sum_{i in h} (z_i - mean_h(z))^2

    The interval is ``R ± q * sqrt(V)`` with ``q`` the t quantile on ``df = n - H`` (H =
    strata after collapsing) or the normal quantile (``dist="normal"``), clipped to [0, 1]
    when every y is in [0, 1].

    Special cases: n == 0 -> everything ``None``; n == 1 -> estimate, no interval. Equal
    weights without strata give ``mean(y) ± q * s / sqrt(n)`` (s the sample SD), i.e. the
    simple mean. Single-unit strata are *collapsed*: all of them are pooled into one
    pseudo-stratum; if there is only one, its residual is centred at the overall mean of
    z, which is 0 (the 'adjust' rule of R's survey package). Either is noted in ``notes``.
    Weights may be rescaled by any constant without changing the result.

    ``strata`` must be strata whose sample sizes were *fixed by the design* (stratified
    SRS). Under Poisson/Bernoulli sampling (each unit drawn independently with its
    ``inclusion_prob``) stratum sample sizes are random; pass ``strata=None`` then, since
    centring within strata drops that variance component (simulation, 6 strata, ~560
    units: 92.9% coverage with strata vs 94.9% without, see tests/test_stats_coverage.py).

    ``clusters`` (e.g. the query or answer each citation belongs to) makes the variance the
    ultimate-cluster one: residuals are summed per cluster and the formula above runs over
    clusters (``n_h`` = clusters in stratum h, ``df`` = clusters - H). Clusters must nest
    in strata. Units of one cluster share its weight in a two-stage design; the estimate is
    then the ratio of weighted totals over units. Coverage is checked by simulation in
    tests/test_stats_coverage.py (clustered Poisson sampling).

    Caveat: with all y equal (e.g. 0 successes) the interval has zero width; for small
    samples or rates near 0/1 also look at a Wilson interval on the effective sample size.
    """
    yy, ww = _weighted_inputs(y, w)
    if yy.size == 0:
        return _no_rate("hajek_linearized", alpha)
    r = hajek_ratio_batch(yy, ww, strata, alpha=alpha, dist=dist, clusters=clusters)
    se = float(r.se[0])
    ok = np.isfinite(se)
    return Interval(
        estimate=float(r.estimate[0]),
        low=float(r.low[0]) if ok else None,
        high=float(r.high[0]) if ok else None,
        n=int(yy.size),
        method="hajek_linearized",
        sum_weights=float(r.sum_weights[0]),
        alpha=alpha,
        se=se if ok else None,
        notes=r.notes,
    )
