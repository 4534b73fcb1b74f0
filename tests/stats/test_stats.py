"""Known values and properties of citeaudit.stats (Wilson, Hájek, cluster bootstrap)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from citeaudit.stats import (
    Interval,
    cluster_bootstrap,
    cluster_design_effect,
    hajek_ratio,
    hajek_ratio_batch,
    hajek_wilson,
    kish_effective_size,
    rate_row,
    wilson,
)

# ------------------------------------------------------------------------------ Wilson


@pytest.mark.parametrize("k,n", [(0, 10), (10, 10), (5, 10)])
def test_wilson_matches_statsmodels(k: int, n: int) -> None:
    iv = wilson(k, n)
    low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert iv.estimate == k / n
    assert iv.low == pytest.approx(low, abs=1e-15)
    assert iv.high == pytest.approx(high, abs=1e-15)
    assert iv.n == n and iv.method == "wilson" and iv.sum_weights is None


@pytest.mark.parametrize(
    "k,n,low,high",
    [
        # closed form for k = 0 / k = n: upper = z^2 / (n + z^2) = 0.2775 for n = 10
        (0, 10, 0.0000, 0.2775),
        (10, 10, 0.7225, 1.0000),
        (5, 10, 0.2366, 0.7634),
        # Newcombe (1998), Stat Med 17:857-872, Table I, method 3 (Wilson score, no CC)
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0000, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_published_values(k: int, n: int, low: float, high: float) -> None:
    iv = wilson(k, n)
    assert round(iv.low, 4) == low
    assert round(iv.high, 4) == high


def test_wilson_zero_denominator_is_none_not_zero() -> None:
    iv = wilson(0, 0)
    assert iv.estimate is None and iv.low is None and iv.high is None and iv.n == 0


@pytest.mark.parametrize("k,n", [(-1, 3), (4, 3), (0, -1)])
def test_wilson_rejects_bad_counts(k: int, n: int) -> None:
    with pytest.raises(ValueError):
        wilson(k, n)


def test_wilson_bounds_contain_estimate_at_the_edges() -> None:
    # statsmodels returns ~2.8e-17 as the lower bound of 0/7; the guard makes it 0
    assert wilson(0, 7).low == 0.0
    assert wilson(7, 7).high == 1.0


@given(n=st.integers(1, 5000), data=st.data(), alpha=st.sampled_from([0.01, 0.05, 0.1, 0.32]))
def test_wilson_properties(n: int, data: st.DataObject, alpha: float) -> None:
    k = data.draw(st.integers(0, n))
    iv = wilson(k, n, alpha)
    assert 0.0 <= iv.low <= iv.estimate <= iv.high <= 1.0


# ------------------------------------------------------------------------------ Hájek


def _reference_linearized_var(y, w, strata) -> float:
    """The docstring formula, written out with a loop over strata."""
    y, w, strata = map(np.asarray, (y, w, strata))
    r = (w * y).sum() / w.sum()
    z = w * (y - r) / w.sum()
    total = 0.0
    for h in np.unique(strata):
        zh = z[strata == h]
        total += len(zh) / (len(zh) - 1) * ((zh - zh.mean()) ** 2).sum()
    return total


def test_hajek_equal_weights_is_the_mean_and_close_to_wald() -> None:
    rng = np.random.default_rng(3)
    y = (rng.random(400) < 0.3).astype(float)
    iv = hajek_ratio(y, np.full(y.size, 7.0), dist="normal")
    p, n = y.mean(), y.size
    assert iv.estimate == pytest.approx(p, rel=1e-12)
    assert iv.se == pytest.approx(y.std(ddof=1) / math.sqrt(n), rel=1e-10)
    wald = 1.959963984540054 * math.sqrt(p * (1 - p) / n)
    assert iv.low == pytest.approx(p - wald, abs=2e-4)
    assert iv.high == pytest.approx(p + wald, abs=2e-4)
    assert iv.sum_weights == pytest.approx(7.0 * n)
    assert iv.method == "hajek_linearized"


def test_hajek_t_interval_uses_df_n_minus_strata() -> None:
    rng = np.random.default_rng(4)
    y, w = rng.random(12), rng.uniform(1, 3, 12)
    strata = np.repeat([0, 1, 2], 4)
    iv = hajek_ratio(y, w, strata)
    q = sps.t.ppf(0.975, 12 - 3)
    assert iv.high - iv.estimate == pytest.approx(q * iv.se, rel=1e-12)


def test_hajek_variance_matches_the_formula_and_stratified_srs() -> None:
    rng = np.random.default_rng(5)
    sizes, big_n = np.array([30, 50, 80]), np.array([3000, 1000, 400])
    strata = np.repeat([0, 1, 2], sizes)
    y = (rng.random(sizes.sum()) < np.repeat([0.9, 0.5, 0.2], sizes)).astype(float)
    w = np.repeat(big_n / sizes, sizes)
    iv = hajek_ratio(y, w, strata)
    assert iv.se**2 == pytest.approx(_reference_linearized_var(y, w, strata), rel=1e-12)
    # stratified SRS textbook variance (no fpc): sum_h (N_h/N)^2 s_h^2 / n_h
    s2 = np.array([y[strata == h].var(ddof=1) for h in range(3)])
    textbook = (((big_n / big_n.sum()) ** 2) * s2 / sizes).sum()
    assert iv.se**2 == pytest.approx(textbook, rel=1e-12)
    strat_mean = (big_n * [y[strata == h].mean() for h in range(3)]).sum() / big_n.sum()
    assert iv.estimate == pytest.approx(strat_mean, rel=1e-12)


def test_hajek_weight_scaling_invariance() -> None:
    rng = np.random.default_rng(6)
    y = (rng.random(200) < 0.4).astype(float)
    w, s = rng.uniform(1, 20, 200), rng.integers(0, 5, 200)
    a, b = hajek_ratio(y, w, s), hajek_ratio(y, w * 123.4, s)
    for f in ("estimate", "low", "high", "se"):
        assert getattr(a, f) == pytest.approx(getattr(b, f), rel=1e-10)
    assert b.sum_weights == pytest.approx(123.4 * a.sum_weights)


def test_hajek_empty_and_single_unit() -> None:
    empty = hajek_ratio([], [])
    assert (empty.estimate, empty.low, empty.high, empty.n) == (None, None, None, 0)
    one = hajek_ratio([1.0], [4.0])
    assert one.estimate == 1.0 and one.low is None and one.high is None and one.notes


def test_hajek_single_unit_strata_are_collapsed() -> None:
    y, w = np.array([1.0, 0, 1, 0, 1]), np.array([1.0, 2, 3, 4, 5])
    iv = hajek_ratio(y, w, ["a", "b", "c", "c", "c"])
    pooled = hajek_ratio(y, w, [9, 9, 1, 1, 1])  # "a" and "b" pooled by hand
    assert iv.se == pytest.approx(pooled.se, rel=1e-12)
    assert "collapsed" in iv.notes[0]
    # one lonely stratum: residual centred at 0 (the overall mean of z)
    lone = hajek_ratio(y, w, ["a", "c", "c", "c", "c"])
    r = (w * y).sum() / w.sum()
    z = w * (y - r) / w.sum()
    expected = z[0] ** 2 + 4 / 3 * ((z[1:] - z[1:].mean()) ** 2).sum()
    assert lone.se**2 == pytest.approx(expected, rel=1e-12)
    assert "lonely" in lone.notes[0]


def test_hajek_tuple_strata_and_real_y() -> None:
    y, w = np.array([2.5, 3.5, 10.0, 12.0]), np.ones(4)
    iv = hajek_ratio(y, w, [("e", "d1"), ("e", "d1"), ("e", "d2"), ("e", "d2")])
    assert iv.estimate == pytest.approx(7.0)
    assert iv.high > 1.0  # not a proportion: no clipping


def test_hajek_batch_matches_scalar() -> None:
    rng = np.random.default_rng(7)
    y = (rng.random((5, 60)) < 0.3).astype(float)
    w = rng.uniform(1, 9, (5, 60))
    s = np.repeat([0, 1, 2], 20)
    batch = hajek_ratio_batch(y, w, s)
    for i in range(5):
        iv = hajek_ratio(y[i], w[i], s)
        assert (iv.estimate, iv.low, iv.high) == pytest.approx(
            (batch.estimate[i], batch.low[i], batch.high[i]), rel=1e-12
        )


@pytest.mark.parametrize("w", [[1.0, 0.0], [1.0, -1.0], [1.0, np.nan]])
def test_hajek_rejects_bad_weights(w: list[float]) -> None:
    with pytest.raises(ValueError):
        hajek_ratio([1.0, 0.0], w)


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.booleans(), st.floats(1.0, 1000.0), st.integers(0, 4)),
        min_size=2,
        max_size=60,
    ),
    alpha=st.sampled_from([0.01, 0.05, 0.2]),
)
def test_hajek_properties(rows: list[tuple[bool, float, int]], alpha: float) -> None:
    y, w, s = (np.array(c) for c in zip(*rows, strict=True))
    iv = hajek_ratio(y.astype(float), w, s, alpha=alpha)
    assert iv.n == len(rows)
    assert 0.0 <= iv.low <= iv.estimate <= iv.high <= 1.0


# ------------------------------------------------------------------------------ bootstrap


def _clustered(seed: int = 8):
    rng = np.random.default_rng(seed)
    clusters = rng.integers(0, 12, 500)
    y = (rng.random(500) < 0.2 + 0.05 * (clusters % 5)).astype(float)
    return y, rng.uniform(1, 10, 500), clusters


def test_cluster_bootstrap_is_deterministic_per_seed() -> None:
    y, w, c = _clustered()
    a = cluster_bootstrap(y, w, c, reps=500, seed=1)
    b = cluster_bootstrap(y, w, c, reps=500, seed=1)
    other = cluster_bootstrap(y, w, c, reps=500, seed=2)
    assert a == b
    assert (a.low, a.high) != (other.low, other.high)
    assert a.estimate == pytest.approx((w * y).sum() / w.sum())
    assert a.method == "cluster_bootstrap" and a.sum_weights == pytest.approx(w.sum())


def test_cluster_bootstrap_many_clusters_in_chunks() -> None:
    # 20,000 clusters force several chunks of replicates; width matches the binomial SE
    rng = np.random.default_rng(9)
    c = np.arange(20_000)
    y = (rng.random(20_000) < 0.5).astype(float)
    iv = cluster_bootstrap(y, np.ones(20_000), c, reps=450, seed=0)
    assert 0.0 <= iv.low <= iv.estimate <= iv.high <= 1.0
    se = math.sqrt(0.25 / 20_000)
    assert iv.high - iv.low == pytest.approx(2 * 1.96 * se, rel=0.2)


def test_cluster_bootstrap_edge_cases() -> None:
    empty = cluster_bootstrap([], [], [])
    assert empty.estimate is None and empty.n == 0
    one = cluster_bootstrap([1.0, 0.0], [1.0, 1.0], ["d", "d"])
    assert one.estimate == 0.5 and one.low is None and one.high is None


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.booleans(), st.floats(1.0, 100.0), st.integers(0, 6)),
        min_size=1,
        max_size=40,
    ),
    seed=st.integers(0, 2**32 - 1),
)
def test_cluster_bootstrap_properties(rows: list[tuple[bool, float, int]], seed: int) -> None:
    y, w, c = (np.array(col) for col in zip(*rows, strict=True))
    iv = cluster_bootstrap(y.astype(float), w, c, reps=200, seed=seed)
    if iv.low is None:
        assert len(np.unique(c)) == 1
    else:
        assert 0.0 <= iv.low <= iv.estimate <= iv.high <= 1.0


# ------------------------------------------------------------------------------ rows


def test_rate_row_keeps_unresolved_beside_the_rate() -> None:
    row = rate_row(3, 10, 7)
    assert row["estimate"] == 0.3  # 3/10, not 3/17
    assert row["unresolved"] == 7 and row["method"] == "wilson"
    assert rate_row(0, 0, 5)["estimate"] is None


def test_rate_row_with_a_weighted_interval() -> None:
    iv = hajek_ratio([1.0, 0.0, 1.0], [1.0, 2.0, 3.0])
    row = rate_row(2, 3, 1, interval=iv)
    assert row["estimate"] == pytest.approx(4 / 6) and row["method"] == "hajek_linearized"
    with pytest.raises(ValueError):
        rate_row(2, 4, 1, interval=iv)
    with pytest.raises(ValueError):
        rate_row(5, 4, 0)


def test_interval_is_frozen() -> None:
    iv = Interval(0.5, 0.4, 0.6, 10, "wilson")
    with pytest.raises(AttributeError):
        iv.estimate = 0.1  # type: ignore[misc]


def test_hajek_clusters_of_one_unit_change_nothing() -> None:
    rng = np.random.default_rng(11)
    y = (rng.random(40) < 0.6).astype(float)
    w = rng.uniform(1, 4, 40)
    strata = np.repeat([0, 1], 20)
    plain = hajek_ratio(y, w, strata)
    clustered = hajek_ratio(y, w, strata, clusters=np.arange(40))
    assert clustered.estimate == pytest.approx(plain.estimate)
    assert (clustered.low, clustered.high) == pytest.approx((plain.low, plain.high))


def test_hajek_ultimate_cluster_variance_matches_the_formula() -> None:
    """Residuals summed per cluster; the with-replacement variance runs over clusters."""
    y = np.array([1, 1, 0, 1, 0, 0, 1, 0, 1, 1], dtype=float)
    w = np.array([2, 2, 2, 1, 1, 4, 4, 4, 3, 3], dtype=float)
    cl = np.array([0, 0, 0, 1, 1, 2, 2, 2, 3, 3])
    iv = hajek_ratio(y, w, clusters=cl)
    r = (w * y).sum() / w.sum()
    zc = np.bincount(cl, weights=w * (y - r) / w.sum())
    var = 4 / 3 * ((zc - zc.mean()) ** 2).sum()
    assert iv.estimate == pytest.approx(r)
    assert iv.se == pytest.approx(np.sqrt(var))
    half = sps.t.ppf(0.975, 3) * np.sqrt(var)
    assert (iv.low, iv.high) == pytest.approx((max(0, r - half), min(1, r + half)))
    one = hajek_ratio(y, w, clusters=np.zeros(10))
    assert one.low is None and one.estimate == pytest.approx(r)
    with pytest.raises(ValueError, match="nest in strata"):
        hajek_ratio(y, w, strata=np.arange(10) % 2, clusters=cl)


def test_hajek_wilson_equal_weights_is_wilson() -> None:
    """Equal weights, no clusters: n_eff = n, so exactly Wilson(k, n)."""
    y = np.array([1.0] * 30 + [0.0] * 10)
    iv = hajek_wilson(y, np.ones(40))
    ref = wilson(30, 40)
    assert iv.estimate == pytest.approx(0.75)
    assert (iv.low, iv.high) == pytest.approx((ref.low, ref.high))
    assert iv.method == "hajek_wilson"


def test_hajek_wilson_edges() -> None:
    w = np.array([1.0, 2.0, 2.0, 4.0])
    allpass = hajek_wilson(np.ones(4), w, clusters=[0, 0, 1, 2])
    totals = np.array([3.0, 2.0, 4.0])
    n_eff = totals.sum() ** 2 / (totals**2).sum()
    assert allpass.estimate == 1.0 and allpass.high == 1.0
    assert allpass.low == pytest.approx(n_eff / (n_eff + sps.norm.ppf(0.975) ** 2))
    one = hajek_wilson(np.array([1.0, 0.0]), w[:2], clusters=[5, 5])
    assert one.estimate == pytest.approx(1 / 3) and one.low is None
    assert hajek_wilson([], []).estimate is None
    with pytest.raises(ValueError, match="0/1"):
        hajek_wilson([0.5, 1.0], [1.0, 1.0])


@settings(max_examples=300, deadline=None)
@given(n=st.integers(2, 60), seed=st.integers(0, 2**32 - 1), n_clusters=st.integers(0, 30))
def test_weighted_interval_moves_monotonically_with_k(n: int, seed: int, n_clusters: int
                                                      ) -> None:
    """Fixed design (n units, weights, clusters or none, the metric's design effect), units
    turned from 0 to 1 one at a time in a random order: estimate and both bounds never fall,
    and every k from 0 to n uses the same effective sample size (no jump at the edges)."""
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.2, 5.0, n) ** rng.integers(0, 3)  # equal weights, mild or strong skew
    cl = rng.integers(0, n_clusters, n) if n_clusters else None
    deff = float(rng.uniform(1.0, 4.0)) if n_clusters else None
    order = rng.permutation(n)
    y = np.zeros(n)
    prev = hajek_wilson(y, w, clusters=cl, design_effect=deff)
    effective = {next((x for x in prev.notes if x.startswith("effective")), None)}
    for i in order:
        y[i] = 1.0
        iv = hajek_wilson(y, w, clusters=cl, design_effect=deff)
        if prev.low is None:  # one cluster: never an interval, whatever k
            assert iv.low is None and iv.high is None
        else:
            assert iv.estimate >= prev.estimate - 1e-12
            assert iv.low >= prev.low - 1e-12 and iv.high >= prev.high - 1e-12
            assert iv.low <= iv.estimate <= iv.high
        effective.add(next((x for x in iv.notes if x.startswith("effective")), None))
        prev = iv
    assert len(effective) == 1, effective


def test_one_failure_never_narrows_the_interval_of_all_passing() -> None:
    """165 citations of 45 queries, unequal weights, one design effect for the metric:
    164/165 and 165/165 share the effective sample size, so the interval of 164/165 sits just
    below that of 165/165 and is about as wide (it was six times narrower)."""
    rng = np.random.default_rng(16)
    cl = np.sort(rng.integers(0, 45, 165))
    w = 1.0 / np.array([0.5, 1.0, 0.25])[cl % 3]
    y = np.ones(165)
    y[40] = 0.0
    deff = 2.0
    allpass = hajek_wilson(np.ones(165), w, clusters=cl, design_effect=deff)
    one_fail = hajek_wilson(y, w, clusters=cl, design_effect=deff)
    assert one_fail.low < allpass.low and one_fail.high < allpass.high == 1.0
    n_eff = kish_effective_size(w) / deff
    assert allpass.notes[-1] == one_fail.notes[-1] == (
        f"effective sample size {n_eff:.1f} (Kish {kish_effective_size(w):.1f} / design "
        f"effect {deff:.2f})")
    width = (allpass.high - allpass.low, one_fail.high - one_fail.low)
    assert 0.8 < width[1] / width[0] < 1.5, width


def test_cluster_design_effect_is_bounded_and_defined_at_the_edges() -> None:
    """Outcomes identical within clusters: the design effect is the upper bound (a cluster
    is one draw); independent of the clusters: about 1; all units agree: the upper bound."""
    cl = np.repeat(np.arange(40), 5)
    w = np.ones(200)
    upper = kish_effective_size(w) / kish_effective_size(w, cl)
    same = np.repeat(np.arange(40) % 3 == 0, 5).astype(float)
    assert cluster_design_effect(same, w, cl) == pytest.approx(upper, rel=0.05)
    mixed = (np.arange(200) % 5 == 0).astype(float)  # one success in every cluster
    assert cluster_design_effect(mixed, w, cl) == 1.0
    assert cluster_design_effect(np.ones(200), w, cl) == upper
