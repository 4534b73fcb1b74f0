"""Benchmark: coverage and width of the human-only and the prediction-powered (PPI++)
full-support rate by simulation, at larger scale than the test suite's check.

A frame of four strata (800, 500, 300, 120 pairs; true full-support rates 0.85, 0.6, 0.35,
0.15) and a grader that agrees with the human label on a set share of pairs (each disagreement
a flip). For each sample size (pairs drawn per stratum, unequal inclusion probabilities) and
agreement, ``--reps`` stratified samples without replacement are drawn and both estimators of
``citeaudit.stats.ppi`` computed (the same ``combine`` the pipeline uses): coverage of the 95%
intervals, median interval widths and their ratio, median λ. Also the 85% case the demo's judge
stand-in uses. Prints a markdown table (benchmarks/README.md); a second with 10-20% of the
pairs unresolvable (people cannot judge them): the ratio estimators of the rate among
resolvable pairs.

With ``--derived DIR --date D``, a second table on a real run: the frame is every pair people
labelled that day (``support_labels``, basis human, resolved), its full-support rate known;
samples of ``--n`` pairs drawn from it stratified by engine, or by engine × the grader's
label (``citeaudit.support.sample.draw``, proportional), each estimated with the pipeline's code
(``stratified_ppi``) from the ``locator`` grader's labels and from an 85%-agreement stand-in
(the people's label kept on a fixed 85% of pairs, another label on the rest): coverage of the
frame's rate, median widths and width ratio.

    .venv/bin/python benchmarks/bench_ppi.py [--reps 5000] [--derived data/derived --date D]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from citeaudit.stats.ppi import Moments, combine

SIZES = np.array([800, 500, 300, 120])
RATES = np.array([0.85, 0.6, 0.35, 0.15])
TAKES = {"n=64 (16 each)": [16, 16, 16, 16], "n=171": [40, 50, 45, 36],
         "n=430": [150, 120, 100, 60]}
AGREEMENTS = (0.5, 0.7, 0.85, 0.95)


def simulate(agreement: float, take: list[int], reps: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    ys, fs = [], []
    for size, rate in zip(SIZES, RATES, strict=True):
        y = (rng.random(size) < rate).astype(float)
        ys.append(y)
        fs.append(np.where(rng.random(size) < agreement, y, 1 - y))
    cols: dict[str, list[np.ndarray]] = {k: [] for k in ("ybar", "fbar", "syy", "syf", "sff")}
    for y, f, n in zip(ys, fs, take, strict=True):
        picks = np.argsort(rng.random((reps, len(y))), axis=1)[:, :n]
        ys_, fs_ = y[picks], f[picks]
        yb, fb = ys_.mean(1), fs_.mean(1)
        cols["ybar"].append(yb)
        cols["fbar"].append(fb)
        cols["syy"].append(((ys_ - yb[:, None]) ** 2).sum(1) / (n - 1))
        cols["syf"].append(((ys_ - yb[:, None]) * (fs_ - fb[:, None])).sum(1) / (n - 1))
        cols["sff"].append(((fs_ - fb[:, None]) ** 2).sum(1) / (n - 1))
    h = len(SIZES)
    m = Moments(N=np.broadcast_to(SIZES.astype(float), (reps, h)),
                n=np.broadcast_to(np.array(take, float), (reps, h)),
                F=np.broadcast_to(np.array([f.mean() for f in fs]), (reps, h)),
                **{k: np.stack(v, axis=1) for k, v in cols.items()})
    r = combine(m)
    truth = sum(y.sum() for y in ys) / SIZES.sum()
    return {
        "ppi_cover": float(np.mean((r["low"] <= truth) & (truth <= r["high"]))),
        "human_cover": float(np.mean((r["human_low"] <= truth) & (truth <= r["human_high"]))),
        "ppi_width": float(np.median(r["high"] - r["low"])),
        "human_width": float(np.median(r["human_high"] - r["human_low"])),
        "ratio": float(np.median(r["width_ratio"])),
        "lam": float(np.median(r["lam"])),
    }


UNRESOLVED = np.array([0.1, 0.2, 0.15, 0.12])  # shares of pairs people cannot judge
_PAIRS = (("y", "y"), ("y", "f"), ("f", "f"), ("y", "d"), ("y", "g"), ("f", "d"), ("f", "g"),
          ("d", "d"), ("d", "g"), ("g", "g"))


def simulate_unresolved(agreement: float, take: list[int], reps: int, seed: int
                        ) -> dict[str, float]:
    """As :func:`simulate`, with ``UNRESOLVED`` of each stratum's pairs unresolvable (d = 0,
    y = 0) and a grader predicting d (g) and y (f) at ``agreement``: the ratio estimator of
    the rate among resolvable pairs, human-only and PPI++."""
    rng = np.random.default_rng(seed)
    cols: dict[str, list[np.ndarray]] = {}
    big_f, big_g, y_total, d_total = [], [], 0.0, 0.0
    for size, rate, un, n in zip(SIZES, RATES, UNRESOLVED, take, strict=True):
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
        for a, b in _PAIRS:
            c = ((vals[a] - means[a][:, None]) * (vals[b] - means[b][:, None])).sum(1) / (n - 1)
            cols.setdefault(f"s{a}{b}", []).append(c)
    h = len(SIZES)
    m = Moments(N=np.broadcast_to(SIZES.astype(float), (reps, h)),
                n=np.broadcast_to(np.array(take, float), (reps, h)),
                F=np.broadcast_to(np.array(big_f), (reps, h)),
                G=np.broadcast_to(np.array(big_g), (reps, h)),
                **{k: np.stack(v, axis=1) for k, v in cols.items()})
    r = combine(m)
    truth = y_total / d_total
    return {
        "ppi_cover": float(np.mean((r["low"] <= truth) & (truth <= r["high"]))),
        "human_cover": float(np.mean((r["human_low"] <= truth) & (truth <= r["human_high"]))),
        "ppi_width": float(np.median(r["high"] - r["low"])),
        "human_width": float(np.median(r["human_high"] - r["human_low"])),
        "ratio": float(np.median(r["width_ratio"])),
        "lam": float(np.median(r["lam"])),
        "bias": float(np.mean(r["human_estimate"]) - truth),
        "ppi_bias": float(np.mean(r["estimate"]) - truth),
    }


def real(derived: str, date: str, n: int, reps: int) -> None:
    """The semi-synthetic table on a real run's labelled pairs (see the module)."""
    import hashlib
    from pathlib import Path

    import pyarrow as pa

    from citeaudit import parquet_io
    from citeaudit.stats.ppi import stratified_ppi
    from citeaudit.support import sample

    part = {"observation_date": date, "codebook": "v1"}
    labels = parquet_io.read_partition(Path(derived), "support_labels", part).to_pylist()
    graded = parquet_io.read_partition(Path(derived), "grader_judgments", part).to_pylist()
    locator = {(g["claim_id"], g["citation_id"]): g["verdict"] for g in graded
               if g["grader"] == "locator"}
    people = {(r["claim_id"], r["citation_id"]): r for r in labels if r["basis"] == "human"
              and r["verdict"] != "unresolved" and r["citation_id"] is not None
              and (r["claim_id"], r["citation_id"]) in locator}
    truth = {k: 1.0 if r["verdict"] == "fully_supported" else 0.0 for k, r in people.items()}
    rate = sum(truth.values()) / len(truth)

    def standin(k: tuple[str, str]) -> str:
        h = hashlib.sha256(f"7:{k[0]}/{k[1]}".encode()).digest()
        keep = int.from_bytes(h[:4], "big") / 2**32 < 0.85
        want = people[k]["verdict"]
        return want if keep else ("unsupported" if want == "fully_supported"
                                  else "fully_supported")

    print(f"\n{derived} {date}: frame = {len(truth)} pairs people labelled, full-support "
          f"rate {rate:.3f}; samples of {n}, {reps} each")
    print("| strata | grader | agreement with people | coverage human-only | coverage PPI | "
          "width human-only | width PPI | width ratio (median) | λ (median) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for by, name, label_of in (
            (("engine",), "locator", lambda k: locator[k]),
            (("engine",), "85% stand-in", standin),
            (("engine", "grader_label"), "locator", lambda k: locator[k]),
            (("engine", "grader_label"), "85% stand-in", standin)):
        rows = [{"answer_id": people[k]["answer_id"], "claim_id": k[0], "citation_id": k[1],
                 "engine": people[k]["engine"], "domain": people[k]["domain"],
                 "verdict": label_of(k)} for k in sorted(people)]
        frame = pa.Table.from_pylist(rows)
        f_all = [1.0 if r["verdict"] == "fully_supported" else 0.0 for r in rows]
        agree = np.mean([label_of(k) == people[k]["verdict"] for k in people])
        cover, cover_h, width, width_h, ratio, lam = [], [], [], [], [], []
        for seed in range(reps):
            drawn = sample.draw(frame, n, by, "proportional", seed, date, "v1",
                                name).to_pylist()
            strata = {(r["claim_id"], r["citation_id"]): sample.stratum_of(r, by)
                      for r in rows}
            keys = [(d["claim_id"], d["citation_id"]) for d in drawn]
            res = stratified_ppi([truth[k] for k in keys],
                                 [1.0 if label_of(k) == "fully_supported" else 0.0
                                  for k in keys],
                                 [strata[k] for k in keys], [strata[(r["claim_id"],
                                                              r["citation_id"])] for r in rows],
                                 f_all)
            if res.low is None:
                continue
            cover.append(res.low <= rate <= res.high)
            cover_h.append(res.human_low <= rate <= res.human_high)
            width.append(res.high - res.low)
            width_h.append(res.human_high - res.human_low)
            ratio.append(res.width_ratio)
            lam.append(res.lam)
        print(f"| {' × '.join(by)} | {name} | {agree:.0%} | {np.mean(cover_h):.3f} | "
              f"{np.mean(cover):.3f} | "
              f"{np.median(width_h):.3f} | {np.median(width):.3f} | {np.median(ratio):.2f} | "
              f"{np.median(lam):.2f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5000)
    ap.add_argument("--derived", help="a real run's derived folder (second table)")
    ap.add_argument("--date", help="its observation date")
    ap.add_argument("--n", type=int, default=60, help="sample size on the real run (60)")
    ap.add_argument("--real-reps", type=int, default=400, help="samples on the real run (400)")
    args = ap.parse_args()
    start = time.perf_counter()
    print("| sample | grader agreement | coverage human-only | coverage PPI | width human-only "
          "| width PPI | width ratio (median) | λ (median) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, take in TAKES.items():
        for i, a in enumerate(AGREEMENTS):
            r = simulate(a, take, args.reps, seed=1000 + 10 * i + len(name))
            print(f"| {name} | {a:.0%} | {r['human_cover']:.3f} | {r['ppi_cover']:.3f} | "
                  f"{r['human_width']:.3f} | {r['ppi_width']:.3f} | {r['ratio']:.2f} | "
                  f"{r['lam']:.2f} |")
    print(f"\n{args.reps} samples per row, {time.perf_counter() - start:.1f} s")
    start = time.perf_counter()
    print("\nWith 10-20% of each stratum's pairs unresolvable (the rate among resolvable "
          "pairs, ratio estimators):")
    print("| sample | grader agreement | coverage human-only | coverage PPI | width human-only "
          "| width PPI | width ratio (median) | λ (median) | bias human-only | bias PPI |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, take in TAKES.items():
        for i, a in enumerate(AGREEMENTS):
            r = simulate_unresolved(a, take, args.reps, seed=2000 + 10 * i + len(name))
            print(f"| {name} | {a:.0%} | {r['human_cover']:.3f} | {r['ppi_cover']:.3f} | "
                  f"{r['human_width']:.3f} | {r['ppi_width']:.3f} | {r['ratio']:.2f} | "
                  f"{r['lam']:.2f} | {r['bias']:+.4f} | {r['ppi_bias']:+.4f} |")
    print(f"\n{args.reps} samples per row, {time.perf_counter() - start:.1f} s")
    if args.derived:
        real(args.derived, args.date, args.n, args.real_reps)


if __name__ == "__main__":
    main()
