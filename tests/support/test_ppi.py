"""The prediction-powered estimator (citeaudit/stats/ppi.py): coverage by simulation, the
width guarantee, and agreement of the scalar path with the batch path the simulation uses."""

from __future__ import annotations

import numpy as np
import pytest

from citeaudit.stats.ppi import PSEUDO, Moments, combine, stratified_ppi

# four strata of unequal size, sampled at unequal fractions (inclusion 0.05 to 0.3)
SIZES = np.array([800, 500, 300, 120])
RATES = np.array([0.85, 0.6, 0.35, 0.15])
TAKE = np.array([40, 50, 45, 36])
REPS = 3000


def population(agreement: float, seed: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per stratum: the human label Y of every unit and a grader that agrees with it at
    ``agreement`` (flipping the others)."""
    rng = np.random.default_rng(seed)
    ys, fs = [], []
    for size, rate in zip(SIZES, RATES, strict=True):
        y = (rng.random(size) < rate).astype(float)
        agree = rng.random(size) < agreement
        ys.append(y)
        fs.append(np.where(agree, y, 1 - y))
    return ys, fs


def simulate(agreement: float, seed: int, reps: int = REPS) -> dict[str, np.ndarray]:
    """``reps`` stratified samples of one population, both estimators on each (vectorized)."""
    ys, fs = population(agreement, seed)
    rng = np.random.default_rng(seed + 1)
    cols: dict[str, list[np.ndarray]] = {k: [] for k in ("ybar", "fbar", "syy", "syf", "sff")}
    for y, f, n in zip(ys, fs, TAKE, strict=True):
        picks = np.argsort(rng.random((reps, len(y))), axis=1)[:, :n]
        ys_, fs_ = y[picks], f[picks]
        yb, fb = ys_.mean(1), fs_.mean(1)
        cols["ybar"].append(yb)
        cols["fbar"].append(fb)
        cols["syy"].append(((ys_ - yb[:, None]) ** 2).sum(1) / (n - 1))
        cols["syf"].append(((ys_ - yb[:, None]) * (fs_ - fb[:, None])).sum(1) / (n - 1))
        cols["sff"].append(((fs_ - fb[:, None]) ** 2).sum(1) / (n - 1))
    m = Moments(N=np.broadcast_to(SIZES.astype(float), (reps, 4)),
                n=np.broadcast_to(TAKE.astype(float), (reps, 4)),
                F=np.broadcast_to(np.array([f.mean() for f in fs]), (reps, 4)),
                **{k: np.stack(v, axis=1) for k, v in cols.items()})
    out = combine(m)
    truth = sum(y.sum() for y in ys) / SIZES.sum()
    out["truth"] = np.full(reps, truth)
    return out


@pytest.mark.parametrize("agreement", [0.5, 0.65, 0.8, 0.9, 0.95])
def test_coverage_at_least_94_percent(agreement: float) -> None:
    """Both 95% intervals cover the frame's true rate in at least 94% of stratified samples
    with unequal inclusion probabilities, whatever the grader's agreement with people."""
    r = simulate(agreement, seed=int(agreement * 1000))
    t = r["truth"]
    ppi = np.mean((r["low"] <= t) & (t <= r["high"]))
    human = np.mean((r["human_low"] <= t) & (t <= r["human_high"]))
    assert ppi >= 0.94, (agreement, ppi)
    assert human >= 0.94, (agreement, human)
    # never wider than human-only, on every sample
    assert np.all(r["width_ratio"][np.isfinite(r["width_ratio"])] <= 1 + 1e-12)
    # unbiased within Monte Carlo error
    assert abs(r["estimate"].mean() - t[0]) < 4 * r["estimate"].std() / np.sqrt(REPS) + 1e-9


def test_a_good_grader_narrows_and_a_useless_one_does_not_widen() -> None:
    """At 95% agreement the PPI interval is much narrower; at 50% (noise) λ is near 0 and the
    interval is as wide as human-only, never wider."""
    good = simulate(0.95, seed=7, reps=500)
    noise = simulate(0.5, seed=8, reps=500)
    assert np.median(good["width_ratio"]) < 0.7
    assert np.median(noise["width_ratio"]) > 0.9
    assert np.all(noise["width_ratio"] <= 1 + 1e-12)
    assert np.median(noise["lam"]) < 0.2


def test_adversarial_grader_clipped_to_human_only() -> None:
    """A grader that says the opposite of people gets λ = 0: exactly the human-only estimate."""
    ys, fs = population(0.0, seed=3)
    rng = np.random.default_rng(4)
    y, f, s, fs_all, ss_all = [], [], [], [], []
    for h, (yh, fh, n) in enumerate(zip(ys, fs, TAKE, strict=True)):
        pick = rng.choice(len(yh), n, replace=False)
        y += list(yh[pick])
        f += list(fh[pick])
        s += [h] * n
        fs_all += list(fh)
        ss_all += [h] * len(fh)
    r = stratified_ppi(y, f, s, ss_all, fs_all)
    assert r.lam == 0.0
    assert r.estimate == pytest.approx(r.human_estimate)
    assert r.width_ratio == pytest.approx(1.0)


def test_scalar_path_matches_hand_computation() -> None:
    """Two strata by hand: weights, finite-population correction, λ and both variances."""
    frame_s = ["a"] * 10 + ["b"] * 6
    frame_f = [1, 1, 1, 1, 1, 1, 0, 0, 0, 0] + [1, 0, 0, 0, 0, 0]
    y = [1, 1, 0, 1, 0, 0]
    f = [1, 1, 1, 0, 1, 0]
    s = ["a", "a", "a", "a", "b", "b"]
    r = stratified_ppi(y, f, s, frame_s, frame_f)
    wa, wb = 10 / 16, 6 / 16
    aa, ab = wa**2 * (1 - 4 / 10) / 4, wb**2 * (1 - 2 / 6) / 2
    ya, fa = np.array([1, 1, 0, 1.0]), np.array([1, 1, 1, 0.0])
    yb, fb = np.array([0, 0.0]), np.array([1, 0.0])

    def cov(y, f):  # with the pseudo-units (1, 0) and (0, 1), weight PSEUDO / 2 each
        c = PSEUDO / 2
        yy, ff = np.r_[y, 1, 0], np.r_[f, 0, 1]
        w = np.r_[np.ones(len(y)), c, c]
        total = w.sum()
        my, mf = (w * yy).sum() / total, (w * ff).sum() / total
        return np.array([[(w * (yy - my) ** 2).sum(), (w * (yy - my) * (ff - mf)).sum()],
                         [0, (w * (ff - mf) ** 2).sum()]]) / (total - 1)

    cov_a, cov_b = cov(ya, fa), cov(yb, fb)
    lam = (aa * cov_a[0, 1] + ab * cov_b[0, 1]) / (aa * cov_a[1, 1] + ab * cov_b[1, 1])
    lam = min(max(lam, 0), 1)
    est = wa * (lam * 0.6 + ya.mean() - lam * fa.mean()) + wb * (lam / 6 + 0 - lam * 0.5)
    assert r.lam == pytest.approx(lam)
    assert r.estimate == pytest.approx(est)
    assert r.human_estimate == pytest.approx(wa * 0.75 + wb * 0)
    assert r.human_se == pytest.approx(np.sqrt(aa * cov_a[0, 0] + ab * cov_b[0, 0]))
    assert (r.n, r.N, r.strata) == (6, 16, 2)


def test_fail_closed_strata() -> None:
    """An unlabelled stratum: no estimate; one label in a larger stratum: no interval."""
    r = stratified_ppi([1, 0], [1, 0], ["a", "a"], ["a", "a", "a", "b", "b"], [1, 0, 1, 0, 0])
    assert r.estimate is None and r.reason == "stratum_unlabelled"
    r = stratified_ppi([1, 0, 1], [1, 0, 1], ["a", "a", "b"], ["a"] * 3 + ["b"] * 3,
                       [1, 0, 1, 1, 1, 0])
    assert r.estimate is not None and r.low is None and r.reason == "no_interval"
    r = stratified_ppi([], [], [], ["a"], [1])
    assert r.estimate is None and r.reason == "no_resolved_units"


# 10% to 20% of each stratum's pairs are ones people cannot judge (unresolved)
UNRESOLVED = np.array([0.1, 0.2, 0.15, 0.12])


def simulate_unresolved(agreement: float, seed: int, reps: int = 2000
                        ) -> dict[str, np.ndarray]:
    """Like ``simulate``, with unresolvable units: d = 0 (y = 0) on a stratum's share
    ``UNRESOLVED``; the grader predicts d (g) and y (f) at ``agreement``. The target is the
    rate among resolvable units, Σ y / Σ d over the frame."""
    rng = np.random.default_rng(seed)
    cols: dict[str, list[np.ndarray]] = {}
    big_f, big_g, y_total, d_total = [], [], 0.0, 0.0
    for size, rate, un, n in zip(SIZES, RATES, UNRESOLVED, TAKE, strict=True):
        d = (rng.random(size) >= un).astype(float)
        y = d * (rng.random(size) < rate)
        g = np.where(rng.random(size) < agreement, d, 1 - d)
        f = np.where(rng.random(size) < agreement, y, 1 - y) * g
        y_total, d_total = y_total + y.sum(), d_total + d.sum()
        big_f.append(f.mean())
        big_g.append(g.mean())
        picks = np.argsort(rng.random((reps, size)), axis=1)[:, :n]
        vals = {"y": y[picks], "f": f[picks], "d": d[picks], "g": g[picks]}
        means = {k: v.mean(1) for k, v in vals.items()}
        for k, v in means.items():
            cols.setdefault(k + "bar", []).append(v)
        for a, b in (("y", "y"), ("y", "f"), ("f", "f"), ("y", "d"), ("y", "g"), ("f", "d"),
                     ("f", "g"), ("d", "d"), ("d", "g"), ("g", "g")):
            c = ((vals[a] - means[a][:, None]) * (vals[b] - means[b][:, None])).sum(1) / (n - 1)
            cols.setdefault(f"s{a}{b}", []).append(c)
    m = Moments(N=np.broadcast_to(SIZES.astype(float), (reps, 4)),
                n=np.broadcast_to(TAKE.astype(float), (reps, 4)),
                F=np.broadcast_to(np.array(big_f), (reps, 4)),
                G=np.broadcast_to(np.array(big_g), (reps, 4)),
                **{k: np.stack(v, axis=1) for k, v in cols.items()})
    out = combine(m)
    out["truth"] = np.full(reps, y_total / d_total)
    return out


@pytest.mark.parametrize("agreement", [0.5, 0.8, 0.95])
def test_ratio_coverage_with_unresolved_pairs(agreement: float) -> None:
    """With 10-20% of sampled pairs unresolved, the ratio estimator of the rate among
    resolvable pairs (and its PPI++ counterpart) covers at least 94% at nominal 95%, is
    never wider with PPI, and its bias is within Monte Carlo error."""
    r = simulate_unresolved(agreement, seed=int(agreement * 100) + 11)
    t = r["truth"]
    assert np.mean((r["low"] <= t) & (t <= r["high"])) >= 0.94, agreement
    assert np.mean((r["human_low"] <= t) & (t <= r["human_high"])) >= 0.94, agreement
    assert np.all(r["width_ratio"][np.isfinite(r["width_ratio"])] <= 1 + 1e-12)
    for key in ("estimate", "human_estimate"):
        assert abs(r[key].mean() - t[0]) < 4 * r[key].std() / np.sqrt(len(t)) + 2e-3
    # the estimated resolvable share D (the ratio's denominator): 80-90% here
    assert 0.8 < np.median(r["resolved"]) < 0.9


def test_ratio_estimator_by_hand() -> None:
    """Two strata, one unresolved judged pair: the ratio of the Horvitz-Thompson totals and
    its linearized variance; d = 1 everywhere gives the plain path exactly."""
    frame_s = ["a"] * 10 + ["b"] * 6
    frame_f = [1] * 6 + [0] * 4 + [1, 0, 0, 0, 0, 0]
    frame_g = [1] * 9 + [0] + [1] * 6
    s = ["a", "a", "a", "a", "b", "b", "b"]
    y = [1, 1, 0, 0, 0, 1, 0]
    d = [1, 1, 1, 0, 1, 1, 1]
    f = [1, 1, 1, 0, 1, 0, 0]
    g = [1, 1, 1, 0, 1, 1, 1]
    r = stratified_ppi(y, f, s, frame_s, frame_f, d=d, g=g, frame_g=frame_g)
    wa, wb = 10 / 16, 6 / 16
    num, den = wa * 2 / 4 + wb * 1 / 3, wa * 3 / 4 + wb * 1
    rate = num / den
    assert r.human_estimate == pytest.approx(rate)
    assert (r.n, r.n_unresolved, r.N) == (6, 1, 16)
    # linearized variance: residual e = y - R d within each stratum (with the pseudo-units,
    # both resolvable: e = 1 - R and -R, weight PSEUDO / 2 each)
    var = 0.0
    for w, n, big, ys, ds in ((wa, 4, 10, y[:4], d[:4]), (wb, 3, 6, y[4:], d[4:])):
        e = np.r_[np.array(ys) - rate * np.array(ds), 1 - rate, -rate]
        wt = np.r_[np.ones(n), PSEUDO / 2, PSEUDO / 2]
        me = (wt * e).sum() / wt.sum()
        s2 = (wt * (e - me) ** 2).sum() / (wt.sum() - 1)
        var += w * w * (1 - n / big) / n * s2
    assert r.human_se == pytest.approx(np.sqrt(var) / den)
    assert r.se <= r.human_se + 1e-12 and r.lam is not None
    # PPI: one λ on both totals
    lam = r.lam
    num_p = wa * (lam * 0.6 + 2 / 4 - lam * 3 / 4) + wb * (lam / 6 + 1 / 3 - lam * 1 / 3)
    den_p = wa * (lam * 0.9 + 3 / 4 - lam * 3 / 4) + wb * (lam * 1 + 1 - lam * 1)
    assert r.estimate == pytest.approx(num_p / den_p)
    # every pair resolvable: exactly the plain stratified estimator
    plain = stratified_ppi(y, f, s, frame_s, frame_f)
    same = stratified_ppi(y, f, s, frame_s, frame_f, d=[1] * 7, g=[1] * 7, frame_g=[1] * 16)
    for k in ("estimate", "se", "human_estimate", "human_se", "lam"):
        assert getattr(same, k) == pytest.approx(getattr(plain, k)), k
    # nothing resolved: no rate; y = 1 on an unresolved pair is refused
    none = stratified_ppi([0, 0], [0, 1], ["a", "a"], ["a"] * 3, [0, 1, 1], d=[0, 0])
    assert none.estimate is None and none.reason == "no_resolved_units"
    with pytest.raises(ValueError, match="cannot have y = 1"):
        stratified_ppi([1], [1], ["a"], ["a"], [1], d=[0])
