"""Simulated query panels for the comparison tests and the benchmark (no project code here
but the estimator under test is called by the callers).

A finite population of queries, each with 1..4 units on each side (citations of one answer),
a query effect shared by both sides on the logit scale (the same question is hard for every
engine and every day: the reason to pair), Poisson sampling of queries with two inclusion
probabilities (design weights), and a share of queries answered on one side only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from citeaudit.stats.difference import Difference, below_floor, ratio_difference


@dataclass(frozen=True)
class Scenario:
    """One population and design: ``n_queries`` in the population, rates ``p_a``/``p_b``,
    query effect sd ``spread`` (logit), ``pair_share`` of queries on both sides, inclusion
    probabilities ``pi`` (two values: weighted) and the expected sample size through ``scale``."""

    name: str
    p_a: float
    p_b: float
    spread: float = 1.0
    pair_share: float = 1.0
    pi: tuple[float, float] = (0.02, 0.08)
    n_queries: int = 5000
    max_units: int = 4


def _logit(p: float) -> float:
    return float(np.log(p / (1 - p)))


def population(s: Scenario, seed: int) -> dict[str, np.ndarray]:
    """Fixed outcomes of every query on both sides (the finite population)."""
    rng = np.random.default_rng(seed)
    m = rng.integers(1, s.max_units + 1, s.n_queries)
    effect = rng.normal(0.0, s.spread, s.n_queries)
    pa = 1 / (1 + np.exp(-(_logit(s.p_a) + effect)))
    pb = 1 / (1 + np.exp(-(_logit(s.p_b) + effect)))
    on_b = rng.random(s.n_queries) < s.pair_share
    # of the queries not on both sides, half are on a only, half on b only
    on_a = ~on_b | (rng.random(s.n_queries) < s.pair_share)
    on_b = on_b | ~on_a
    pi = np.where(rng.random(s.n_queries) < 0.3, s.pi[1], s.pi[0])
    return {"m": m, "ya": rng.binomial(m, pa).astype(float),
            "yb": rng.binomial(m, pb).astype(float), "on_a": on_a, "on_b": on_b, "pi": pi,
            "pa": pa, "pb": pb}


def true_difference(pop: dict[str, np.ndarray]) -> float:
    """The population's difference of the two rates (every unit of every query)."""
    a, b = pop["on_a"], pop["on_b"]
    return float(pop["ya"][a].sum() / pop["m"][a].sum() - pop["yb"][b].sum() / pop["m"][b].sum())


def draw(pop: dict[str, np.ndarray], rng: np.random.Generator, *,
         fresh: bool = False, floor: bool = False) -> Difference:
    """One sample of queries (Poisson, inclusion probability ``pi``) and its difference;
    ``fresh``: the units' outcomes drawn anew (a new day of the same engine, for A/A);
    ``floor``: no interval below the floor of evidence, as the ``comparisons`` table."""
    s = rng.random(pop["m"].size) < pop["pi"]
    m, w = pop["m"][s], 1.0 / pop["pi"][s]
    if fresh:
        ya, yb = rng.binomial(m, pop["pa"][s]), rng.binomial(m, pop["pb"][s])
    else:
        ya, yb = pop["ya"][s], pop["yb"][s]
    a, b = pop["on_a"][s], pop["on_b"][s]
    sums = (ya * w * a, m * w * a, yb * w * b, m * w * b)
    d = ratio_difference(*sums, a_units=m * a, b_units=m * b)
    if floor and below_floor(*sums) is not None:
        return Difference(d.estimate_a, d.estimate_b, d.difference, None, None, None, None,
                          d.n_paired, d.n_only_a, d.n_only_b)
    return d


def coverage(s: Scenario, draws: int, seed: int, *,
             floor: bool = False) -> tuple[float, float, int]:
    """(share of intervals covering the true difference, true difference, draws with an
    interval); ``floor``: only the intervals the ``comparisons`` table gives (above the floor
    of evidence)."""
    pop = population(s, seed)
    truth = true_difference(pop)
    rng = np.random.default_rng(seed + 1)
    hit = n = 0
    for _ in range(draws):
        d = draw(pop, rng, floor=floor)
        if d.low is None:
            continue
        n += 1
        hit += d.low <= truth <= d.high
    return hit / n, truth, n


SCENARIOS = (
    # paired, clustered, weighted; a real difference (the demo's regression, 8% -> 20%)
    Scenario("regression 8%->20%", 0.20, 0.08),
    Scenario("null at 10%", 0.10, 0.10),
    Scenario("near 0: 2% vs 2%", 0.02, 0.02),
    Scenario("near 0: 1% vs 5%", 0.01, 0.05),
    Scenario("near 1: 97% vs 90%", 0.97, 0.90),
    Scenario("partly paired (60%), 50% vs 45%", 0.50, 0.45, pair_share=0.6),
    Scenario("small panel, strong clustering", 0.08, 0.08, spread=2.0, pi=(0.006, 0.024)),
    Scenario("small panel near 0: 3% vs 1%", 0.03, 0.01, pi=(0.006, 0.024)),
    Scenario("unweighted, large panel", 0.30, 0.25, pi=(0.08, 0.08)),
)
