"""The difference of two design-weighted ratios over clustered, possibly paired units.

Two sides (two engines on one date, one engine on two dates, two codebooks on one date) each
estimate a Hájek ratio ``R = sum(w*y) / sum(w)`` over their resolved units. Units belong to
clusters (queries): a query answered on both sides is *paired*, and its units on the two
sides move together (the same question is hard for every engine, on every day). The variance
of ``R_a - R_b`` is estimated from per-cluster linearized residuals

    z_g = (A_ag - R_a * B_ag) / B_a  -  (A_bg - R_b * B_bg) / B_b

(``A``: per-cluster sums of ``w*y``, ``B``: of ``w``; a cluster absent from a side contributes
0 to that side), summed over every cluster with the CR1 factor G/(G-1): the cluster-robust
(sandwich) variance of a paired ratio difference. Pairing enters through the covariance the
residuals of one query share; unpaired queries simply contribute one side. The interval and
the p-value use Student's t with G-1 degrees of freedom, so they agree: the interval excludes 0
exactly when p < alpha.

For rates, each side gets Agresti and Caffo's adjustment (one pseudo-success and one
pseudo-failure of the side's mean unit weight): the interval is centred on the adjusted
difference, and each side's own sandwich variance grows by the ratio of the adjusted to the
plain binomial variance over its effective (Kish) size. Far from 0 and 1 the ratio is about 1
(the pairing's gain is kept); near them it widens an interval that few events make too sure;
at 0 or 1 exactly, where a side has no residual variance at all, the adjusted binomial
variance itself is added. Coverage is checked by simulation
(``tests/comparisons/test_difference.py``; larger: ``benchmarks/bench_comparisons.py``).

Below a floor of evidence (:func:`below_floor`: too few query clusters on a side, or too
few clusters holding an event or a non-event) the t interval on a sandwich variance is not to
be trusted -- one query can make a 69-point difference look significant -- and a caller
reports the difference without an interval or p-value.

Pure: no I/O, no global state, no randomness (a rerun gives the same bytes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

METHOD = "paired_cluster_linearized"
# The floor under an interval and a p-value (:func:`below_floor`). The cluster-robust
# variance is a sum over clusters: with fewer than about ten on a side it is itself too
# noisy for a t interval to hold its level (Cameron and Miller's "few clusters"), and a side
# of one or two queries has almost no residual variance at all. A rate whose events (or
# non-events) sit in a handful of queries has the same problem however many queries there are.
MIN_CLUSTERS = 10
MIN_EVENT_CLUSTERS = 5


@dataclass(frozen=True)
class Difference:
    """Two estimates, their difference ``a - b``, its interval, standard error and p-value.

    ``n_paired`` clusters have resolved units on both sides, ``n_only_a`` / ``n_only_b`` on one
    side only. Any field is ``None`` when undefined (a side without resolved units has no
    estimate; fewer than two clusters, no interval): never 0.
    """

    estimate_a: float | None
    estimate_b: float | None
    difference: float | None
    low: float | None
    high: float | None
    se: float | None
    p_value: float | None
    n_paired: int
    n_only_a: int
    n_only_b: int
    method: str = METHOD
    alpha: float = 0.05
    notes: tuple[str, ...] = ()


def _sides(a_num: ArrayLike, a_den: ArrayLike, b_num: ArrayLike, b_den: ArrayLike
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    arrays = [np.asarray(x, dtype=np.float64).reshape(-1) for x in (a_num, a_den, b_num, b_den)]
    if len({x.size for x in arrays}) != 1:
        raise ValueError("the four per-cluster arrays must have one length")
    if any((x < 0).any() or not np.isfinite(x).all() for x in arrays[1::2]):
        raise ValueError("per-cluster weight sums must be finite and >= 0")
    return arrays[0], arrays[1], arrays[2], arrays[3]


def ratio_difference(
    a_num: ArrayLike,
    a_den: ArrayLike,
    b_num: ArrayLike,
    b_den: ArrayLike,
    *,
    a_units: ArrayLike | None = None,
    b_units: ArrayLike | None = None,
    alpha: float = 0.05,
    rate: bool = True,
) -> Difference:
    """``R_a - R_b`` with a cluster-robust interval, from per-cluster sums over one cluster list.

    ``a_num[g]``/``a_den[g]`` are cluster g's sums of ``w*y`` and ``w`` over side a's resolved
    units (0 and 0 when the cluster has none on side a); likewise for b. ``a_units`` /
    ``b_units`` (optional) are the clusters' resolved unit counts, used for the boundary
    adjustment's pseudo-unit weight (default: one unit per cluster with a positive sum).
    ``rate``: y is 0/1 (the boundary adjustment applies); False for means.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    an, ad, bn, bd = _sides(a_num, a_den, b_num, b_den)
    on_a, on_b = ad > 0, bd > 0
    paired = int((on_a & on_b).sum())
    only_a, only_b = int((on_a & ~on_b).sum()), int((on_b & ~on_a).sum())
    sa, sb = float(ad.sum()), float(bd.sum())
    ra = float(an.sum() / sa) if sa > 0 else None
    rb = float(bn.sum() / sb) if sb > 0 else None
    if ra is None or rb is None:
        return Difference(ra, rb, None, None, None, None, None, paired, only_a, only_b,
                          alpha=alpha, notes=("no resolved units on one side: no difference",))
    diff = ra - rb
    keep = on_a | on_b
    g = int(keep.sum())
    if g < 2:
        return Difference(ra, rb, diff, None, None, None, None, paired, only_a, only_b,
                          alpha=alpha, notes=("1 cluster: the variance cannot be estimated",))
    an, ad, bn, bd = an[keep], ad[keep], bn[keep], bd[keep]
    ua = (np.asarray(a_units, dtype=np.float64).reshape(-1)[keep] if a_units is not None
          else (ad > 0).astype(np.float64))
    ub = (np.asarray(b_units, dtype=np.float64).reshape(-1)[keep] if b_units is not None
          else (bd > 0).astype(np.float64))
    za = (an - ra * ad) / sa
    zb = (bn - rb * bd) / sb
    z = za - zb
    var = g / (g - 1) * float(((z - z.mean()) ** 2).sum())
    notes = []
    centre = diff
    if rate:
        # Agresti–Caffo per side (one pseudo-success and one pseudo-failure of the side's mean
        # unit weight): the centre moves to the adjusted rates, and each side's own sandwich
        # variance grows by the ratio of the adjusted to the plain binomial variance over the
        # side's effective (Kish) size. Far from 0 and 1 the ratio is ~1 (the pairing's gain
        # is kept); near them it widens the interval where few events make the sandwich too
        # sure; at 0 or 1, where a side has no residual variance at all, the adjusted
        # binomial variance itself is added.
        adjusted = []
        for r, s_w, num, den, units, resid in ((ra, sa, an, ad, ua, za),
                                               (rb, sb, bn, bd, ub, zb)):
            w_unit = s_w / max(float(units.sum()), 1.0)
            p_adj = float((num.sum() + w_unit) / (s_w + 2 * w_unit))
            kish = s_w**2 / float((den**2 / np.maximum(units, 1)).sum())
            ac = p_adj * (1 - p_adj) / (kish + 2)
            plain = r * (1 - r) / kish
            own = g / (g - 1) * float(((resid - resid.mean()) ** 2).sum())
            var += ac if plain <= 0 or own <= 0 else max(0.0, ac / plain - 1.0) * own
            adjusted.append(p_adj)
        centre = adjusted[0] - adjusted[1]
        notes.append("Agresti–Caffo adjusted centre and boundary variance")
    se = float(np.sqrt(var))
    df = g - 1
    # imported at the call: Dagster's UI, daemon and code server load this module and never
    # need it
    from scipy import stats as sps
    q = float(sps.t.ppf(1 - alpha / 2, df))
    low, high = centre - q * se, centre + q * se
    p = float(2 * sps.t.sf(abs(centre) / se, df)) if se > 0 else (1.0 if centre == 0 else 0.0)
    # widened (rarely) to contain the estimate itself
    low, high = min(low, diff), max(high, diff)
    notes.append(f"{g} query clusters ({paired} paired), t with {df} df")
    return Difference(ra, rb, diff, float(low), float(high), se, p, paired, only_a, only_b,
                      alpha=alpha, notes=tuple(notes))


@dataclass(frozen=True)
class Floor:
    """Why a difference gets no interval and no p-value: ``reason`` (``too_few_clusters`` or
    ``too_few_events``) and the counts, in words (``note``)."""

    reason: str
    note: str


def below_floor(
    a_num: ArrayLike,
    a_den: ArrayLike,
    b_num: ArrayLike,
    b_den: ArrayLike,
    *,
    rate: bool = True,
    min_clusters: int = MIN_CLUSTERS,
    min_event_clusters: int = MIN_EVENT_CLUSTERS,
) -> Floor | None:
    """None when the evidence is enough for :func:`ratio_difference`'s interval to be read,
    else why not (same per-cluster arrays as there).

    * ``too_few_clusters``: a side has resolved units in fewer than ``min_clusters`` queries;
    * ``too_few_events`` (rates only): fewer than ``min_event_clusters`` (query, side) cells
      hold an event (a unit counted 1), or fewer hold a non-event (a unit counted 0), over the
      two sides together: a difference carried by a few queries' events.
    """
    an, ad, bn, bd = _sides(a_num, a_den, b_num, b_den)
    ga, gb = int((ad > 0).sum()), int((bd > 0).sum())
    if min(ga, gb) < min_clusters:
        return Floor("too_few_clusters",
                     f"{ga} and {gb} queries with resolved units on the two sides (at least "
                     f"{min_clusters} each for an interval): no interval, no p-value")
    if not rate:
        return None
    events = int((an > 0).sum() + (bn > 0).sum())
    # a cell holds a non-event when its w*y falls short of its w (a tolerance for float sums)
    non_events = int(((ad > 0) & (an < ad * (1 - 1e-9))).sum()
                     + ((bd > 0) & (bn < bd * (1 - 1e-9))).sum())
    if min(events, non_events) < min_event_clusters:
        return Floor("too_few_events",
                     f"{events} query-sides with an event and {non_events} with a non-event "
                     f"(at least {min_event_clusters} of each for an interval): no interval, "
                     "no p-value")
    return None


def holm(p_values: ArrayLike) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error), NaN kept where given.

    The adjusted p of the k-th smallest of m p-values is max over j <= k of
    min(1, (m - j + 1) * p_(j)); rejecting where it is below alpha controls the chance of any
    false alarm in the family at alpha."""
    p = np.asarray(p_values, dtype=np.float64).reshape(-1)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(scaled)
    return out
