"""Rows of the ``metrics`` table: counts, unresolved beside them, estimate and interval."""

from __future__ import annotations

from typing import Any

from citeaudit.stats._common import Interval
from citeaudit.stats.wilson import wilson


def rate_row(
    numerator: int,
    denominator: int,
    unresolved: int,
    *,
    interval: Interval | None = None,
    alpha: float = 0.05,
) -> dict[str, Any]:
    """One row of the future ``metrics`` table: counts, estimate and interval.

    ``denominator`` counts only resolved units; ``unresolved`` is reported beside the rate
    and never enters it. Without ``interval`` the rate is Wilson on the counts; pass a
    weighted :class:`Interval` (computed on the same resolved units) to report that instead.
    """
    if min(numerator, denominator, unresolved) < 0 or numerator > denominator:
        raise ValueError(
            f"need 0 <= numerator <= denominator and unresolved >= 0, got "
            f"{numerator}/{denominator}, unresolved={unresolved}"
        )
    iv = interval if interval is not None else wilson(numerator, denominator, alpha)
    if iv.n != denominator:
        raise ValueError(f"interval has n={iv.n} but denominator is {denominator}")
    return {
        "numerator": int(numerator),
        "denominator": int(denominator),
        "unresolved": int(unresolved),
        "estimate": iv.estimate,
        "ci_low": iv.low,
        "ci_high": iv.high,
        "method": iv.method,
        "alpha": iv.alpha,
        "sum_weights": iv.sum_weights,
    }
