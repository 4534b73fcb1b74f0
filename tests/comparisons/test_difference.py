"""The difference of two ratios: its arithmetic, Holm's adjustment, the coverage of its
interval by simulation, and an A/A test of the alerts built on it."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from statsmodels.stats.multitest import multipletests

from citeaudit.codebook import AlertRule
from citeaudit.comparisons import alerts, compute
from citeaudit.stats.difference import holm, ratio_difference
from tests.comparisons.simulate import SCENARIOS, Scenario, coverage, population

DRAWS = 1000


def test_unpaired_unweighted_is_the_two_sample_wald_difference() -> None:
    """One unit per cluster, no cluster on both sides: the sandwich variance is the textbook
    p(1-p)/n of each side (times n/(n-1)), widened by well under 1% by the Agresti–Caffo ratio
    this far from 0 and 1; the estimates are the plain proportions."""
    ya = np.array([1] * 30 + [0] * 70, dtype=float)
    yb = np.array([1] * 15 + [0] * 85, dtype=float)
    zeros = np.zeros(100)
    d = ratio_difference(np.r_[ya, zeros], np.r_[np.ones(100), zeros],
                         np.r_[zeros, yb], np.r_[zeros, np.ones(100)])
    assert (d.estimate_a, d.estimate_b) == (0.30, 0.15)
    assert d.difference == pytest.approx(0.15)
    wald = np.sqrt(0.3 * 0.7 / 100 + 0.15 * 0.85 / 100) * np.sqrt(200 / 199)
    assert wald <= d.se <= 1.01 * wald
    assert (d.n_paired, d.n_only_a, d.n_only_b) == (0, 100, 100)
    assert d.low < 0.15 < d.high and d.p_value < 0.05
    # the interval excludes 0 exactly when p < alpha (one t statistic for both)
    assert (d.low > 0) == (d.p_value < 0.05)


def test_pairing_narrows_the_interval_when_queries_move_together() -> None:
    """The same queries hard on both sides: paired, the shared query effect cancels."""
    rng = np.random.default_rng(3)
    hard = rng.random(200) < 0.3
    ya = (hard | (rng.random(200) < 0.05)).astype(float)
    yb = (hard & (rng.random(200) < 0.9)).astype(float)
    ones = np.ones(200)
    paired = ratio_difference(ya, ones, yb, ones)
    zeros = np.zeros(200)
    unpaired = ratio_difference(np.r_[ya, zeros], np.r_[ones, zeros],
                                np.r_[zeros, yb], np.r_[zeros, ones])
    assert paired.difference == pytest.approx(unpaired.difference)
    assert paired.se < unpaired.se / 2
    assert paired.n_paired == 200


def test_weights_make_the_estimates_hajek_ratios() -> None:
    a_num, a_den = np.array([2.0, 0.0, 10.0]), np.array([4.0, 2.0, 10.0])
    b_num, b_den = np.array([1.0, 1.0, 0.0]), np.array([2.0, 2.0, 0.0])
    d = ratio_difference(a_num, a_den, b_num, b_den)
    assert d.estimate_a == pytest.approx(12 / 16)
    assert d.estimate_b == pytest.approx(2 / 4)
    assert (d.n_paired, d.n_only_a, d.n_only_b) == (2, 1, 0)


def test_no_side_no_difference_and_one_cluster_no_interval() -> None:
    d = ratio_difference([1.0], [2.0], [0.0], [0.0])
    assert d.difference is None and d.estimate_b is None and d.low is None
    one = ratio_difference([1.0], [2.0], [1.0], [4.0])
    assert one.difference == pytest.approx(0.25) and one.low is None and one.p_value is None


def test_a_side_at_zero_still_has_an_interval() -> None:
    """Every unit of one side 0 (an engine with no dead citation): the sandwich alone would
    claim certainty; the adjusted interval stays honest and contains the estimate."""
    a = np.zeros(40)
    b = (np.arange(40) % 10 == 0).astype(float)
    ones = np.ones(40)
    d = ratio_difference(a, ones, b, ones)
    assert d.estimate_a == 0.0
    assert d.low < -0.1 < 0 < d.high
    same = ratio_difference(a, ones, a, ones)
    assert same.low < 0 < same.high and same.p_value == 1.0


def test_holm_matches_statsmodels_and_keeps_missing() -> None:
    p = np.array([0.01, 0.04, np.nan, 0.03, 0.5, 0.002])
    ours = holm(p)
    ok = ~np.isnan(p)
    ref = multipletests(p[ok], method="holm")[1]
    np.testing.assert_allclose(ours[ok], ref)
    assert np.isnan(ours[2])
    assert np.isnan(holm([np.nan])).all() and holm([]).size == 0


def test_interval_of_the_difference_covers() -> None:
    """Coverage over 1,000 samples of each population: paired, clustered by query, weighted,
    partly paired, near 0 and 1, small and large panels. Each scenario at least 92.5% (about 3
    Monte Carlo standard errors under 95%), the scenarios together at least 94%."""
    shares = {}
    for i, scenario in enumerate(SCENARIOS):
        share, truth, n = coverage(scenario, DRAWS, seed=i + 11)
        assert n >= 0.99 * DRAWS, scenario.name
        shares[scenario.name] = round(share, 3)
    assert min(shares.values()) >= 0.925, shares
    assert float(np.mean(list(shares.values()))) >= 0.94, shares


def test_the_intervals_the_table_gives_cover_on_a_small_panel_near_0() -> None:
    """The hardest scenario (about 57 queries, 1.4 expected events on the 1% side), whose
    plain interval covers about 93-95%: the comparisons table gives no interval below the
    floor of evidence (too few queries holding an event), and the intervals it does give
    cover at least 94%."""
    scenario = next(s for s in SCENARIOS if s.name.startswith("small panel near 0"))
    share, _, n = coverage(scenario, DRAWS, seed=SCENARIOS.index(scenario) + 11, floor=True)
    assert 0.5 * DRAWS < n < DRAWS  # some samples are below the floor, most are not
    assert share >= 0.94, share


def _comparison_units(pop: dict, s: np.ndarray, y: np.ndarray, engine: str) -> pa.Table:
    m, pi = pop["m"][s], pop["pi"][s]
    q = [f"q{i:05d}" for i in np.flatnonzero(s)]
    return pa.table({
        "metric": ["dead_rate"] * len(q), "engine": [engine] * len(q),
        "domain": ["news"] * len(q), "query_id": q, "units": m.astype(np.int64),
        "resolved": m.astype(np.int64), "unresolved": np.zeros(len(q), np.int64),
        "sum_wy": y / pi, "sum_w": m / pi,
    })


def test_a_a_alerts_fire_at_most_at_their_error_rate() -> None:
    """Two days of one engine on the same panel (~190 queries), nothing changed: over 150
    seeds the rule
    (dead rate, either direction, alpha 0.05) fires on at most 5% plus Monte Carlo slack, and
    the same pipeline catches a planted rise from 8% to 20% nearly always."""
    rule = AlertRule(name="dead", metric="dead_rate", engine="*", family="vs_previous_date",
                     direction="either", alpha=0.05)
    null = Scenario("A/A", 0.08, 0.08)
    moved = Scenario("regression", 0.20, 0.08)
    fired = {"A/A": 0, "regression": 0}
    seeds = 150
    for scenario in (null, moved):
        pop = population(scenario, seed=5)
        rng = np.random.default_rng(6)
        for _ in range(seeds):
            s = rng.random(pop["m"].size) < pop["pi"]
            m = pop["m"][s]
            today = rng.binomial(m, pop["pa"][s]).astype(float)
            yesterday = rng.binomial(m, pop["pb"][s]).astype(float)
            table = compute.compare(_comparison_units(pop, s, today, "x"), "2026-11-02", "v1",
                                    history={"2026-11-01": _comparison_units(pop, s, yesterday,
                                                                             "x")},
                                    baseline_days=0)
            fired[scenario.name] += alerts.evaluate([rule], table).num_rows > 0
    # 5% of 150 is 7.5; the Monte Carlo sd is ~2.7: 3 sd of slack
    assert fired["A/A"] <= 0.05 * seeds + 3 * np.sqrt(0.05 * 0.95 * seeds), fired
    assert fired["regression"] >= 0.9 * seeds, fired
