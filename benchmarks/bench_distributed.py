"""Benchmark: a 10-date × 2-codebook backfill in process vs on Celery workers (1 and 2).

    .venv/bin/python benchmarks/bench_distributed.py [--days 10] [--answers 40]

Starts PostgreSQL and Redis on free loopback ports (as tests/distributed does; needs
``redis-server`` and the PostgreSQL binaries) and Celery workers, all stopped by PID at the end.
The daily audit of every date runs once in process (not timed: the backfill reads it); then the
judged audit of every date × codebook (v1, v2) is timed, each configuration on its own copy of
the daily outputs:

* ``in_process``: today's runner, one process, SQLite instance;
* ``celery, 1 worker`` / ``celery, 2 workers``: one orchestrating process (runs one after the
  other, each run's steps sent to the workers), Postgres instance;
* ``celery, 2 workers, 2 runs at once``: two orchestrating processes, one per codebook, as the
  daemon's run queue does with ``max_concurrent_runs`` ≥ 2.

Prints wall time, partitions per minute, speed-up over 1 worker, the per-step overhead of
Celery + Postgres ((1-worker time − in-process time) / steps) and whether every configuration
wrote the same bytes as the in-process one (registry cache fetch times aside).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
sys.path.insert(0, str(PROJECT))
sys.path.insert(0, str(PROJECT / "tests" / "distributed"))  # the loopback services harness

VERSIONS = ("v1", "v2")
ORCHESTRATE = """
import sys
from pathlib import Path
from pipelines import runner
raw, derived, version = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
dates = sys.argv[4].split(",")
failed = runner.backfill(raw, derived, version, dates, executor="celery")
sys.exit(1 if failed else 0)
"""


def digests(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "catalog.duckdb" and not p.name.startswith(".")
        and not p.relative_to(folder).as_posix().startswith("scholarly_records/")
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=10)
    parser.add_argument("--answers", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    from distributed_services import (
        missing_binaries,
        running_services,
        start_worker,
        stop,
        wait_workers,
    )

    from citeaudit import demo_corpus, layout
    from pipelines import runner
    from pipelines.definitions import build_defs
    from pipelines.jobs import judged_audit
    from pipelines.resources import PathsResource

    missing = missing_binaries()
    if missing:
        print(f"needs {', '.join(missing)} (.ci/run installs redis-server)", file=sys.stderr)
        return 2
    cache = HERE / ".cache" / f"distributed-{args.days}d-{args.answers}a-s{args.seed}"
    shutil.rmtree(cache, ignore_errors=True)
    raw = cache / "raw"
    demo_corpus.generate(raw, seed=args.seed, answers=args.answers, days=args.days)
    dates = layout.answer_dates(raw)
    all_dates, _ = layout.discover_dates(raw)
    steps_per_run = len(build_defs(PathsResource()).resolve_job_def(judged_audit.name).nodes)
    partitions = len(dates) * len(VERSIONS)
    plan = [s for v in VERSIONS for s in runner.backfill_plan(raw, v, dates)]

    base_env = dict(os.environ)
    for var in ("CITEAUDIT_CROSSREF_URL", "CITEAUDIT_OPENALEX_URL", "CITEAUDIT_EXECUTOR"):
        base_env.pop(var, None)
    os.environ.clear()
    os.environ.update(base_env)

    daily = cache / "daily"
    os.environ["DAGSTER_HOME"] = str(cache / "home_daily")
    started = time.perf_counter()
    runner.execute_steps(raw, daily, runner.plan(raw, all_dates, []), register=list(VERSIONS),
                         check_inputs=True)
    print(f"daily audit of {len(all_dates)} dates (not timed): "
          f"{time.perf_counter() - started:.1f} s", flush=True)

    rows: list[tuple[str, float, bool]] = []

    def fresh(name: str) -> Path:
        target = cache / name
        shutil.copytree(daily, target)
        return target

    derived = fresh("in_process")
    os.environ["DAGSTER_HOME"] = str(cache / "home_in_process")
    started = time.perf_counter()
    failed = runner.execute_steps(raw, derived, plan, register=list(VERSIONS))
    rows.append(("in_process", time.perf_counter() - started, not failed))
    want = digests(derived)
    print(f"in_process: {rows[-1][1]:.1f} s", flush=True)

    with running_services(cache / "services") as services:
        home = cache / "home_pg"
        home.mkdir()
        shutil.copyfile(PROJECT / "deploy" / "dagster.postgres.yaml", home / "dagster.yaml")
        env = {**base_env, **services.env, "DAGSTER_HOME": str(home)}
        os.environ.update(env)
        workers: list[subprocess.Popen] = []
        try:
            for count in (1, 2):
                while len(workers) < count:
                    name = f"w{len(workers) + 1}"
                    workers.append(start_worker(name, env, cache / f"{name}.log"))
                wait_workers(services.broker, count)
                derived = fresh(f"celery_{count}")
                started = time.perf_counter()
                failed = runner.execute_steps(raw, derived, plan, register=list(VERSIONS),
                                              executor="celery")
                seconds = time.perf_counter() - started
                rows.append((f"celery, {count} worker(s)", seconds,
                             not failed and digests(derived) == want))
                print(f"{rows[-1][0]}: {seconds:.1f} s", flush=True)
            derived = fresh("celery_2x2")
            started = time.perf_counter()
            procs = [
                subprocess.Popen([sys.executable, "-c", ORCHESTRATE, str(raw), str(derived), v,
                                  ",".join(dates)], env=env, cwd=PROJECT)
                for v in VERSIONS
            ]
            codes = [p.wait() for p in procs]
            seconds = time.perf_counter() - started
            rows.append(("celery, 2 workers, 2 runs at once", seconds,
                         not any(codes) and digests(derived) == want))
            print(f"{rows[-1][0]}: {seconds:.1f} s", flush=True)
        finally:
            for proc in workers:
                stop(proc)

    one = rows[1][1]
    print(f"\n{len(dates)} answer dates × {len(VERSIONS)} codebooks = {partitions} judged runs, "
          f"{steps_per_run} steps each ({partitions * steps_per_run} steps), "
          f"{args.answers} answers per date\n")
    print("| configuration | wall s | runs/min | speed-up vs 1 worker | same bytes |")
    print("|---|---:|---:|---:|---|")
    for name, seconds, same in rows:
        print(f"| {name} | {seconds:.1f} | {partitions / seconds * 60:.1f} | "
              f"{one / seconds:.2f} | {'yes' if same else 'NO'} |")
    overhead = (one - rows[0][1]) / (partitions * steps_per_run)
    print(f"\nCelery + Postgres overhead per step (1 worker − in process, per step): "
          f"{overhead:.2f} s")
    return 0 if all(same for _n, _s, same in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
