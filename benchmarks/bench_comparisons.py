"""Benchmark: the coverage of the comparisons' difference intervals at a larger size than the
test suite's, the A/A false-alarm rate over more seeds, and the comparisons' cost on a
25,000-answer night beside the metrics step's.

* coverage: every scenario of ``tests/comparisons/simulate.py`` over ``--draws`` samples (the
  tests use 1,000): the share of 95% intervals that cover the population's difference, and of
  the intervals the ``comparisons`` table gives (above the floor of evidence);
* A/A: two fresh samples of one engine on the same panel, ``--seeds`` times; the share where the
  demo's rule (dead rate, either direction, alpha 0.05) fires;
* cost: the synthetic night of ``bench_metrics.py`` (``benchmarks/.cache/metrics-N``, built when
  absent): wall seconds of ``metrics.compute_partition``, of ``comparisons.query_sums`` (the
  ``comparison_units`` step) and of ``compare`` against a copy of the night as the previous
  date and as a 7-day baseline, and of ``cited_domains`` (the per-domain view).

    .venv/bin/python benchmarks/bench_comparisons.py [--draws 5000] [--seeds 2000]
        [--answers 25000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from citeaudit.codebook import AlertRule  # noqa: E402
from citeaudit.comparisons import alerts, compute, domains, units  # noqa: E402
from citeaudit.metrics import compute_partition  # noqa: E402
from tests.comparisons.simulate import SCENARIOS, Scenario, coverage, draw, population  # noqa: E402


def _coverage(draws: int) -> None:
    print(f"coverage of the 95% interval of the difference, {draws} samples per scenario; "
          "beside it, of the intervals the comparisons table gives (above the floor of "
          "evidence) and the share of samples below the floor")
    shares, floored = [], []
    for i, s in enumerate(SCENARIOS):
        t0 = time.perf_counter()
        share, truth, n = coverage(s, draws, seed=1000 + i)
        above, _, n_above = coverage(s, draws, seed=1000 + i, floor=True)
        shares.append(share)
        floored.append(above)
        se = np.sqrt(0.95 * 0.05 / n)
        print(f"  {s.name:40s} {share:.4f} (±{2 * se:.4f}) above the floor {above:.4f} "
              f"({1 - n_above / n:.1%} below) true {truth:+.4f} "
              f"{time.perf_counter() - t0:.1f}s")
    print(f"  pooled {np.mean(shares):.4f}, lowest {min(shares):.4f}; above the floor: pooled "
          f"{np.mean(floored):.4f}, lowest {min(floored):.4f}")


def _a_a(seeds: int) -> None:
    rule = AlertRule(name="dead", metric="dead_rate", family="*", direction="either")
    fired = 0
    pop = population(Scenario("A/A", 0.08, 0.08), seed=77)
    rng = np.random.default_rng(78)
    for _ in range(seeds):
        d = draw(pop, rng, fresh=True)
        row = {"family": "vs_previous_date", "metric": "dead_rate", "engine_a": "x",
               "engine_b": "x", "difference": d.difference, "p_value": d.p_value,
               "higher_is_better": False, "verdict": "estimated"}
        fired += alerts.fires(rule, row, d.p_value) if d.p_value is not None else 0
    print(f"A/A: the rule fired on {fired} of {seeds} no-change samples "
          f"({fired / seeds:.2%}; alpha 5%)")


def _cost(n_answers: int) -> None:
    import bench_metrics

    derived = HERE / ".cache" / f"metrics-{n_answers}"
    if not (derived / "answers").is_dir():
        print(f"building the synthetic night of {n_answers} answers in {derived}")
        bench_metrics.build(derived, n_answers)
    date, version = bench_metrics.DATE, bench_metrics.VERSION
    t0 = time.perf_counter()
    compute_partition(derived, date, version)
    t_metrics = time.perf_counter() - t0
    t0 = time.perf_counter()
    table = units.query_sums(derived, date, version)
    t_units = time.perf_counter() - t0
    history = {d: table for d in compute.window(date, 7)}
    t0 = time.perf_counter()
    out = compute.compare(table, date, version, history=history)
    t_compare = time.perf_counter() - t0
    t0 = time.perf_counter()
    cited = domains.cited_domains(derived, date, version)
    t_domains = time.perf_counter() - t0
    print(f"{n_answers} answers: metrics {t_metrics:.2f}s, comparison_units {t_units:.2f}s "
          f"({table.num_rows} query rows), comparisons {t_compare:.2f}s ({out.num_rows} rows, "
          f"previous date and a 7-day baseline), cited_domains {t_domains:.2f}s "
          f"({cited.num_rows} rows)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=5000)
    ap.add_argument("--seeds", type=int, default=2000)
    ap.add_argument("--answers", type=int, default=25000)
    ap.add_argument("--skip-cost", action="store_true")
    args = ap.parse_args()
    _coverage(args.draws)
    _a_a(args.seeds)
    if not args.skip_cost:
        _cost(args.answers)


if __name__ == "__main__":
    main()
