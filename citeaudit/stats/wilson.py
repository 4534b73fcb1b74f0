"""Wilson score interval for an unweighted binomial proportion (via statsmodels)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from citeaudit.stats._common import Interval, _check_alpha


def wilson_bounds(
    successes: ArrayLike, n: ArrayLike, alpha: float = 0.05
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Vectorized Wilson score bounds (statsmodels), guarded so ``low <= k/n <= high``.

    Why the guard: statsmodels returns e.g. ``2.8e-17`` as the lower bound for 0/7, which
    would put the bound above the estimate 0. Bounds are clamped to contain ``k/n`` and to
    lie in [0, 1]. All ``n`` must be positive; :func:`wilson` handles ``n == 0``.
    """
    # imported at the call: Dagster's UI, daemon and code server load this module and never
    # need it
    from statsmodels.stats.proportion import proportion_confint
    _check_alpha(alpha)
    k = np.asarray(successes, dtype=np.float64)
    m = np.asarray(n, dtype=np.float64)
    low, high = proportion_confint(k, m, alpha=alpha, method="wilson")
    p = k / m
    low = np.clip(np.minimum(np.asarray(low, dtype=np.float64), p), 0.0, 1.0)
    high = np.clip(np.maximum(np.asarray(high, dtype=np.float64), p), 0.0, 1.0)
    return low, high


def wilson(successes: int, n: int, alpha: float = 0.05) -> Interval:
    """Wilson score interval for ``successes / n`` (unweighted binomial proportion).

    Uses ``statsmodels.stats.proportion.proportion_confint(method="wilson")``. Wilson is
    chosen over Wald because its coverage stays near nominal for small n and rates near
    0 or 1 (Brown, Cai & DasGupta 2001; Newcombe 1998). ``n == 0`` gives estimate and
    bounds ``None``: there is no denominator, hence no rate.
    """
    _check_alpha(alpha)
    k, m = int(successes), int(n)
    if m < 0 or k < 0 or k > m:
        raise ValueError(f"need 0 <= successes <= n, got {successes!r}/{n!r}")
    if m == 0:
        return Interval(None, None, None, 0, "wilson", alpha=alpha, notes=("n == 0: no rate",))
    low, high = wilson_bounds(k, m, alpha)
    return Interval(k / m, float(low), float(high), m, "wilson", alpha=alpha)
