"""Benchmark: a backfill of one codebook over 30 observation dates of the demo corpus.

    .venv/bin/python benchmarks/bench_backfill.py [--days 30] [--answers 1500] [--codebook v2]

Generates the corpus into benchmarks/.cache/backfill-*/raw (reused when present), runs the
daily audit of every date and the judged audit under v1 once (`citeaudit run --codebook v1`;
not timed, the backfill needs the daily outputs; its derived folder and DAGSTER_HOME are kept
in the cache), then times `citeaudit backfill --codebook V` (one in-process `judged_audit` run
per answer date, the same code path as the CLI), and prints the wall time, the CPU time of the
process, the time per date × codebook partition and the judged assets it materialized.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--answers", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--codebook", default="v2")
    args = parser.parse_args()

    from citeaudit import demo_corpus, layout
    from pipelines import runner
    from pipelines.definitions import build_defs
    from pipelines.jobs import judged_audit
    from pipelines.resources import PathsResource

    cache = HERE / ".cache" / f"backfill-{args.days}d-{args.answers}a-s{args.seed}"
    raw = cache / "raw"
    if not (raw / "ground_truth.json").is_file():
        shutil.rmtree(cache, ignore_errors=True)
        started = time.perf_counter()
        demo_corpus.generate(raw, seed=args.seed, answers=args.answers, days=args.days)
        print(f"corpus generated in {time.perf_counter() - started:.1f} s: {raw}")
    dates = layout.answer_dates(raw)
    judged = build_defs(PathsResource()).resolve_job_def(judged_audit.name)
    names = sorted(k.to_user_string() for k in judged.asset_layer.executable_asset_keys)
    if not names:
        print("no date × codebook asset is defined: nothing to backfill", file=sys.stderr)
        return 2

    work = cache / "work"
    derived, done = work / "derived", work / "setup.done"
    os.environ["DAGSTER_HOME"] = str(work / "home")
    all_dates, _ = layout.discover_dates(raw)
    if not done.is_file():
        shutil.rmtree(work, ignore_errors=True)
        started = time.perf_counter()
        failed = runner.run_dates(raw, derived, all_dates, versions=["v1"])
        assert not failed, f"the daily/v1 run failed: {failed}"
        done.write_text(f"{time.perf_counter() - started:.1f}\n")
    setup = float(done.read_text())
    load = os.getloadavg()[0]
    cpu = time.process_time()
    started = time.perf_counter()
    failed = runner.backfill(raw, derived, args.codebook, dates)
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu
    files = [p for p in derived.glob(f"*/observation_date=*/codebook={args.codebook}/*")]
    print(f"answer dates: {len(dates)}; judged assets ({len(names)}): {', '.join(names)}")
    print(f"setup (daily audit of {len(all_dates)} dates + judged v1), once: {setup:.1f} s")
    print(
        f"backfill {args.codebook}: {elapsed:.1f} s wall, {cpu:.1f} s CPU, for {len(dates)} "
        f"partitions ({elapsed / len(dates):.2f} s wall, {cpu / len(dates):.2f} s CPU per date; "
        f"catalog rebuild included), {len(files)} files written, {len(failed)} failed; "
        f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
