"""Prediction-powered rates: people label a stratified random sample, a grader labels everything.

The design: a frame of N units (every graded claim-citation pair of a day) cut into strata h of
N_h units; a simple random sample without replacement of n_h units in each stratum is labelled
by people (inclusion probability n_h / N_h, unequal across strata); a grader's prediction f is
known for every unit of the frame. The target is the frame's mean of the human label Y
(among the units people can resolve: below).

Human-only (λ = 0), the stratified estimator: Σ_h W_h ȳ_h with W_h = N_h / N.

Prediction-powered (PPI++, Angelopoulos et al. 2023, "PPI++: Efficient Prediction-Powered
Inference"), per stratum: θ_h = λ F̄_h + (ȳ_h − λ f̄_h), where F̄_h is the grader's mean over
all N_h units of the stratum (a census, no sampling error) and f̄_h its mean over the labelled
units. For any fixed λ it is unbiased whatever the grader's quality: the grader only moves
variance. Its variance is Σ_h a_h S²(Y − λ f)_h with a_h = W_h² (1 − n_h/N_h) / n_h (the
finite-population correction of sampling without replacement). The tuning parameter λ
minimizes the estimated variance, λ* = Σ a_h S_yf,h / Σ a_h S_ff,h, clipped to [0, 1]: since the
estimated variance is a convex quadratic in λ, any λ between 0 and λ* gives an estimated
variance no larger than at λ = 0, so **the PPI interval is never wider than the human-only
one** on the same sample (a grader that does not track people gets λ ≈ 0). With a census of
predictions PPI++ is the survey statistician's difference (generalized regression) estimator.

Units people judge but cannot resolve (page unavailable, claim unclear) are not a 0 of the
rate: the target is the rate among resolvable units, R = Y / D, with d = 1 for a resolvable
unit (y = 0 when d = 0). Both totals are estimated by design (Horvitz-Thompson, stratified):
R̂ = Σ_h W_h ȳ_h / Σ_h W_h d̄_h, a ratio estimator; its variance by linearization is that of
the residual e = y − R̂ d, divided by D̂². PPI++ does the same with one λ on both totals, the
grader predicting y (f: it says fully supported) and d (g: it could label the unit):
R̂_PPI = Σ_h W_h (λ F̄_h + ȳ_h − λ f̄_h) / Σ_h W_h (λ Ḡ_h + d̄_h − λ ḡ_h) — the PPI++
M-estimator of the estimating equation Σ d (y − θ) = 0 — with λ minimizing the variance of
e − λ (f − R̂ g). Both variances are evaluated at the human-only R̂ and D̂, so they share one
quadratic in λ and the guarantee above holds. With every unit resolvable (d = g = 1) all of
this is the plain stratified mean.

Intervals are Wald intervals with Student's t on n − H degrees of freedom, clipped to [0, 1].
Coverage is checked by simulation (``tests/support/test_ppi.py``: grader agreement 50% to 95%,
unequal inclusion probabilities, and 10-20% unresolvable units). What it does not promise:
units drawn but not judged yet are assumed missing at random within their stratum, and a
stratum with fewer than two judged units (and not fully judged) has no variance estimate:
then there is no interval (``reason``), never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from citeaudit.stats._common import _check_alpha


@dataclass(frozen=True)
class PPIResult:
    """Both estimates of one rate on one stratified sample, with their 95% intervals.

    ``n`` units people resolved, ``n_unresolved`` units they judged unresolved, ``N`` units
    graded (the frame); ``lam`` the tuning
    parameter used; ``width_ratio`` = PPI width / human-only width (≤ 1). ``estimate`` etc. are
    None with ``reason`` set when the sample cannot support an estimate.
    """

    estimate: float | None
    low: float | None
    high: float | None
    se: float | None
    human_estimate: float | None
    human_low: float | None
    human_high: float | None
    human_se: float | None
    lam: float | None
    n: int
    N: int
    strata: int
    width_ratio: float | None
    reason: str | None = None
    note: str | None = None
    n_unresolved: int = 0  # judged units people left unresolved (outside the rate)


@dataclass(frozen=True)
class Moments:
    """Per-stratum moments, each an array of shape (..., H): the estimator's sufficient
    statistics (a leading batch axis lets a simulation compute many samples at once).

    ``y``/``f``: the human label and the grader's prediction of it; ``d``/``g``: whether the
    unit is resolvable (people could judge it) and the grader's prediction of that. Without the
    ``d``/``g`` moments (None) every unit is resolvable (d = g = 1): the plain stratified mean."""

    N: NDArray[np.float64]
    n: NDArray[np.float64]
    F: NDArray[np.float64]  # grader mean over the whole stratum
    ybar: NDArray[np.float64]
    fbar: NDArray[np.float64]
    syy: NDArray[np.float64]
    syf: NDArray[np.float64]
    sff: NDArray[np.float64]
    G: NDArray[np.float64] | None = None  # grader's resolvable share over the whole stratum
    dbar: NDArray[np.float64] | None = None
    gbar: NDArray[np.float64] | None = None
    syd: NDArray[np.float64] | None = None
    syg: NDArray[np.float64] | None = None
    sfd: NDArray[np.float64] | None = None
    sfg: NDArray[np.float64] | None = None
    sdd: NDArray[np.float64] | None = None
    sdg: NDArray[np.float64] | None = None
    sgg: NDArray[np.float64] | None = None


_VARS = ("y", "f", "d", "g")
_COVS = {("y", "y"): "syy", ("y", "f"): "syf", ("f", "f"): "sff", ("y", "d"): "syd",
         ("y", "g"): "syg", ("f", "d"): "sfd", ("f", "g"): "sfg", ("d", "d"): "sdd",
         ("d", "g"): "sdg", ("g", "g"): "sgg"}


def moments(y: ArrayLike, f: ArrayLike, strata: ArrayLike, frame_strata: ArrayLike,
            frame_f: ArrayLike, d: ArrayLike | None = None, g: ArrayLike | None = None,
            frame_g: ArrayLike | None = None) -> tuple[list, Moments]:
    """(stratum labels, moments) of one labelled sample (``y``, ``f``, ``strata`` per judged
    unit) within its frame (``frame_strata``, ``frame_f`` per unit of the frame).

    ``d`` (per judged unit): 1 when people resolved it, 0 when they judged it unresolved
    (its ``y`` is then 0); ``g`` and ``frame_g``: the grader's prediction of ``d`` for the
    judged units and for every unit of the frame. Omitted: every unit resolvable."""
    y, f = np.asarray(y, float), np.asarray(f, float)
    ratio = d is not None
    d = np.ones_like(y) if d is None else np.asarray(d, float)
    g = np.ones_like(y) if g is None else np.asarray(g, float)
    strata, frame_strata = np.asarray(strata, object), np.asarray(frame_strata, object)
    frame_f = np.asarray(frame_f, float)
    frame_g = np.ones_like(frame_f) if frame_g is None else np.asarray(frame_g, float)
    if ratio and np.any(y > d):
        raise ValueError("a unit people judged unresolved (d = 0) cannot have y = 1")
    labels = sorted(set(frame_strata.tolist()), key=str)
    unknown = set(strata.tolist()) - set(labels)
    if unknown:
        raise ValueError(f"labelled units in strata outside the frame: {sorted(unknown, key=str)}")
    keys = ["N", "n", "F", "G", "ybar", "fbar", "dbar", "gbar", *_COVS.values()]
    cols: dict[str, list[float]] = {k: [] for k in keys}
    for h in labels:
        fr = frame_strata == h
        m = strata == h
        k = int(m.sum())
        cols["N"].append(int(fr.sum()))
        cols["n"].append(k)
        cols["F"].append(float(frame_f[fr].mean()))
        cols["G"].append(float(frame_g[fr].mean()))
        vals = {"y": y[m], "f": f[m], "d": d[m], "g": g[m]}
        for v in _VARS:
            cols[v + "bar"].append(float(vals[v].mean()) if k else np.nan)
        if k >= 2:
            c = np.cov(np.vstack([vals[v] for v in _VARS]), ddof=1)
            for (a, b), name in _COVS.items():
                cols[name].append(float(c[_VARS.index(a), _VARS.index(b)]))
        else:
            for name in _COVS.values():
                cols[name].append(0.0 if k == int(fr.sum()) else np.nan)
    out = {k: np.array(v, float) for k, v in cols.items()}
    if not ratio:  # the plain mean: no d/g moments (g means nothing without d)
        for k in ("G", "dbar", "gbar", "syd", "syg", "sfd", "sfg", "sdd", "sdg", "sgg"):
            out.pop(k)
    return labels, Moments(**out)


PSEUDO = 1.0  # total weight of the two pseudo-units of each stratum (see _augmented)
# the pseudo-units (y, f, d, g): resolvable, people and grader disagreeing on y
_PSEUDO_UNITS = ({"y": 1.0, "f": 0.0, "d": 1.0, "g": 1.0}, {"y": 0.0, "f": 1.0, "d": 1.0,
                                                             "g": 1.0})


def _full(m: Moments) -> dict[str, NDArray[np.float64]]:
    """Every mean and covariance of (y, f, d, g), the d/g ones filled for d = g = 1 when the
    moments carry none (a constant: mean 1, no covariance)."""
    out = {"ybar": m.ybar, "fbar": m.fbar, "syy": m.syy, "syf": m.syf, "sff": m.sff}
    one, zero = np.ones_like(m.ybar), np.zeros_like(m.ybar)
    out["dbar"] = one if m.dbar is None else m.dbar
    out["gbar"] = one if m.gbar is None else m.gbar
    for name in ("syd", "syg", "sfd", "sfg", "sdd", "sdg", "sgg"):
        value = getattr(m, name)
        out[name] = zero if value is None else value
    return out


def _augmented(m: Moments) -> dict[str, NDArray[np.float64]]:
    """Covariances of (y, f, d, g) per stratum with two pseudo-units (y, f, d, g) =
    (1, 0, 1, 1) and (0, 1, 1, 1), of weight ``PSEUDO / 2`` each, added (variances only, never
    the point estimates): the Agresti–Coull idea for the residual. A grader that agrees with
    people on every labelled unit of a stratum would otherwise give that stratum a variance of
    zero, and intervals that cover too rarely (91% at 95% agreement without it, in the
    simulation). With d = g = 1 this is the pseudo-units (y, f) = (1, 0) and (0, 1)."""
    c = PSEUDO / 2  # the weight of each pseudo-unit
    n, k = m.n, m.n + PSEUDO
    mom = _full(m)
    out = {}
    with np.errstate(invalid="ignore"):
        sums = {v: n * mom[v + "bar"] + c * sum(p[v] for p in _PSEUDO_UNITS) for v in _VARS}
        for (a, b), name in _COVS.items():
            cross = (np.where(n > 1, (n - 1) * mom[name], 0) + n * mom[a + "bar"] * mom[b + "bar"]
                     + c * sum(p[a] * p[b] for p in _PSEUDO_UNITS))
            out[name] = (cross - sums[a] * sums[b] / k) / (k - 1)
    lonely = (n < 2) & (n < m.N)  # no variance from one label: stays undefined
    nan = np.where(lonely, np.nan, 0.0)
    return {k: v + nan for k, v in out.items()}


def combine(m: Moments, alpha: float = 0.05) -> dict[str, NDArray[np.float64]]:
    """Both estimators from per-stratum moments (arrays broadcast over a leading batch axis).

    The rate among resolvable units, R = Σ_h W_h ȳ_h / Σ_h W_h d̄_h (a ratio of two
    Horvitz-Thompson totals; with every unit resolvable, d = 1, the stratified mean), and its
    PPI++ counterpart with one λ for both totals. Variances by linearization: the residual
    e = y − R d (and its prediction u = f − R g), Σ a_h S²(e − λu)_h / D², both evaluated at
    the human-only R and D = Σ W_h d̄_h, so the two variances share one quadratic in λ (and the
    PPI one is never the larger).

    Returns arrays: estimate, se, low, high (PPI), human_estimate, human_se, human_low,
    human_high, lam, width_ratio, resolved (D, the estimated resolvable share). NaN where
    undefined (a stratum with no judged unit; a stratum with one judged unit that is not its
    whole stratum; no resolvable unit at all)."""
    _check_alpha(alpha)
    cov = _augmented(m)
    mom = _full(m)
    G = np.ones_like(m.F) if m.G is None else m.G
    total = m.N.sum(axis=-1, keepdims=True)
    w = m.N / total
    with np.errstate(divide="ignore", invalid="ignore"):
        den_h = np.sum(w * mom["dbar"], axis=-1)
        rate = np.where(den_h > 0, np.sum(w * mom["ybar"], axis=-1) / den_h, np.nan)
        r = rate[..., None]
        see = cov["syy"] - 2 * r * cov["syd"] + r * r * cov["sdd"]
        seu = cov["syf"] - r * cov["syg"] - r * cov["sfd"] + r * r * cov["sdg"]
        suu = cov["sff"] - 2 * r * cov["sfg"] + r * r * cov["sgg"]
        fpc = np.where(m.n > 0, 1.0 - m.n / m.N, np.nan)
        a = np.where(m.n > 0, w * w * fpc / m.n, np.nan)
        den = np.sum(a * suu, axis=-1)
        lam = np.where(den > 0, np.sum(a * seu, axis=-1) / den, 0.0)
    lam = np.clip(np.nan_to_num(lam, nan=0.0), 0.0, 1.0)
    lam_h = lam[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        num_p = np.sum(w * (lam_h * m.F + mom["ybar"] - lam_h * mom["fbar"]), axis=-1)
        den_p = np.sum(w * (lam_h * G + mom["dbar"] - lam_h * mom["gbar"]), axis=-1)
        ppi = np.where((den_h > 0) & (den_p > 0), num_p / den_p, np.nan)
        v_h = np.sum(a * see, axis=-1) / den_h**2
        v_p = np.sum(a * (see - 2 * lam_h * seu + lam_h * lam_h * suu), axis=-1) / den_h**2
    v_p = np.minimum(np.maximum(v_p, 0.0), v_h)  # rounding only: λ is chosen so v_p <= v_h
    df = np.maximum(m.n.sum(axis=-1) - m.n.shape[-1], 1)
    # imported at the call: Dagster's UI, daemon and code server load this module and never
    # need it
    from scipy import stats as _sp
    q = _sp.t.ppf(1 - alpha / 2, df)
    se_h, se_p = np.sqrt(v_h), np.sqrt(v_p)
    out = {
        "estimate": ppi, "se": se_p,
        "low": np.clip(ppi - q * se_p, 0, 1), "high": np.clip(ppi + q * se_p, 0, 1),
        "human_estimate": rate, "human_se": se_h,
        "human_low": np.clip(rate - q * se_h, 0, 1),
        "human_high": np.clip(rate + q * se_h, 0, 1),
        "lam": lam, "resolved": den_h,
    }
    with np.errstate(divide="ignore", invalid="ignore"):
        out["width_ratio"] = np.where(
            out["human_high"] - out["human_low"] > 0,
            (out["high"] - out["low"]) / (out["human_high"] - out["human_low"]), np.nan)
    return out


def _num(x: float) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)


def stratified_ppi(y: ArrayLike, f: ArrayLike, strata: ArrayLike, frame_strata: ArrayLike,
                   frame_f: ArrayLike, alpha: float = 0.05, *, d: ArrayLike | None = None,
                   g: ArrayLike | None = None, frame_g: ArrayLike | None = None) -> PPIResult:
    """The human-only and the PPI++ estimate of the frame's rate of ``y`` (see the module).

    ``y``: the human label of each judged unit (0/1 for a rate); ``f``: the grader's
    prediction for the same units; ``strata``: their stratum. ``frame_strata`` and
    ``frame_f``: the stratum and grader prediction of every unit of the frame (the labelled
    units included). With ``d`` (1 = people resolved the unit, 0 = judged unresolved, its ``y``
    0), ``g`` and ``frame_g`` (the grader's prediction of ``d``: it could label the unit), the
    target is the rate among resolvable units: a ratio estimator (``combine``)."""
    labels, m = moments(y, f, strata, frame_strata, frame_f, d, g, frame_g)
    judged, N, H = int(m.n.sum()), int(m.N.sum()), len(labels)
    resolved = judged if d is None else int(np.asarray(d, float).sum())
    base = {"n": resolved, "N": N, "strata": H, "n_unresolved": judged - resolved}
    empty = {k: None for k in ("estimate", "low", "high", "se", "human_estimate",
                               "human_low", "human_high", "human_se", "lam", "width_ratio")}
    if H == 0 or resolved == 0:
        return PPIResult(**empty, **base, reason="no_resolved_units",
                         note="no resolved human label in the sample: no rate")
    unlabelled = [str(h) for h, k in zip(labels, m.n, strict=True) if k == 0]
    if unlabelled:
        return PPIResult(**empty, **base, reason="stratum_unlabelled",
                         note="no human label in stratum " + ", ".join(unlabelled[:5]) +
                         ": its rate is unknown, so the day's is")
    lonely = [str(h) for h, k, big in zip(labels, m.n, m.N, strict=True) if k == 1 and big > 1]
    r = combine(m, alpha)
    r.pop("resolved")
    values = {k: _num(float(v)) for k, v in r.items()}
    if lonely:
        return PPIResult(**{**values, "low": None, "high": None, "se": None,
                            "human_low": None, "human_high": None, "human_se": None,
                            "width_ratio": None}, **base, reason="no_interval",
                         note="one human label in stratum " + ", ".join(lonely[:5]) +
                         ": its variance cannot be estimated")
    return PPIResult(**values, **base)
