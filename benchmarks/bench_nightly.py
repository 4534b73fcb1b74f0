"""Benchmark a whole night: ``citeaudit run`` over one day of N answers, cold, per step.

    .venv/bin/python benchmarks/bench_nightly.py [--answers 25000,50000,100000] [--seed 7]

For each N: the demo generator (``citeaudit demo-corpus --answers N --days 1``) writes one
observation day into ``benchmarks/.cache/nightly-N-sS/raw`` (reused when present; generation is
not timed). The pipeline then runs cold, as a night would: a fresh derived folder and Dagster
instance (so an empty registry cache), the demo's loopback registry at the resources' default
polite rates (Crossref 10/s single records and 3/s lists and searches, OpenAlex 10/s; see
``citeaudit/scholarly/endpoints.py``), every request to 127.0.0.1. ``citeaudit run`` is a
child process; while it runs, its CPU time and resident set (with any worker processes it
starts) are sampled from ``/proc`` every 0.1 s and afterwards attributed to the Dagster step
that was running (step start/end times from the run's event log).

Prints, per N, a table of wall seconds, CPU seconds and peak RSS per step and in total (total
CPU and peak RSS from the child's rusage), and, for two sizes or more, the growth from the
smallest to the largest (the targets: 100,000 answers in ≤ 5 min wall and ≤ 2 GB peak RSS;
25k → 100k time ≤ 4.4×, RSS ≤ 2×). ``--json FILE`` also writes the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import peak_rss  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


def _proc_stat(pid: int) -> tuple[int, float, int] | None:
    """(parent pid, CPU seconds incl. waited-for children, RSS kB) of a live process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    # fields[0] is 'state' (field 3 of proc(5)): utime=14, stime=15, cutime=16, cstime=17, rss=24
    ppid = int(fields[1])
    cpu = sum(int(fields[i]) for i in (11, 12, 13, 14)) / TICKS
    return ppid, cpu, int(fields[21]) * PAGE_KB


def _tree(root: int) -> tuple[float, int]:
    """CPU seconds and RSS (kB) of ``root`` and its live descendants."""
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _proc_stat(int(entry))
            if st is not None:
                stats[int(entry)] = st
    keep, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, _, _) in stats.items():
            if ppid == parent and pid not in keep:
                keep.add(pid)
                frontier.append(pid)
    return (sum(stats[p][1] for p in keep if p in stats),
            sum(stats[p][2] for p in keep if p in stats))


@dataclass
class Sampler:
    """Samples (epoch seconds, CPU s, RSS kB) of a process tree until stopped."""

    pid: int
    every: float = 0.1
    samples: list[tuple[float, float, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            cpu, rss = _tree(self.pid)
            if rss:
                self.samples.append((time.time(), cpu, rss))
            self._stop.wait(self.every)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def _step_intervals(home: Path) -> list[tuple[str, float, float]]:
    """(step key, start, end) of every step of every run in the instance, by start time."""
    import dagster as dg

    os.environ["DAGSTER_HOME"] = str(home)
    kinds = {dg.DagsterEventType.STEP_START, dg.DagsterEventType.STEP_SUCCESS,
             dg.DagsterEventType.STEP_FAILURE}
    out = []
    with dg.DagsterInstance.get() as instance:
        for run in instance.get_runs():
            starts: dict[str, float] = {}
            for entry in instance.all_logs(run.run_id, of_type=kinds):
                event = entry.dagster_event
                if event.event_type == dg.DagsterEventType.STEP_START:
                    starts[entry.step_key] = entry.timestamp
                elif entry.step_key in starts:
                    out.append((entry.step_key, starts.pop(entry.step_key), entry.timestamp))
    return sorted(out, key=lambda t: t[1])


def _attribute(intervals, samples) -> dict[str, dict[str, float]]:
    """Per step name: wall seconds, CPU seconds (sample deltas inside its intervals), peak RSS."""
    steps: dict[str, dict[str, float]] = defaultdict(lambda: {"wall_s": 0.0, "cpu_s": 0.0,
                                                              "peak_rss_mb": 0.0})
    for key, start, end in intervals:
        s = steps[key]
        s["wall_s"] += end - start
        inside = [x for x in samples if start <= x[0] <= end]
        before = [x for x in samples if x[0] < start]
        if inside:
            base = before[-1][1] if before else inside[0][1]
            s["cpu_s"] += inside[-1][1] - base
            s["peak_rss_mb"] = max(s["peak_rss_mb"], max(x[2] for x in inside) / 1024)
    return dict(steps)


def run_night(answers: int, seed: int, executor: str | None = None, keep: str = "cold") -> dict:
    """Generate (or reuse) one day of ``answers`` answers and time a cold ``citeaudit run``
    (``--executor`` when given; the outputs in ``<cache>/<keep>/derived``)."""
    from citeaudit import demo_corpus

    cache = HERE / ".cache" / f"nightly-{answers}-s{seed}"
    raw = cache / "raw"
    if not (raw / "ground_truth.json").is_file():
        shutil.rmtree(cache, ignore_errors=True)
        t0 = time.perf_counter()
        demo_corpus.generate(raw, seed=seed, answers=answers, days=1)
        print(f"{answers:,} answers generated in {time.perf_counter() - t0:.1f} s: {raw}",
              flush=True)
    work = cache / keep
    shutil.rmtree(work, ignore_errors=True)
    derived, home = work / "derived", work / "home"
    home.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("CITEAUDIT_CROSSREF_URL", "CITEAUDIT_OPENALEX_URL")}
    env["DAGSTER_HOME"] = str(home)
    exe = Path(sys.executable).parent / "citeaudit"
    cmd = [str(exe), "run", "--raw", str(raw), "--derived", str(derived), "--quiet"]
    if executor:
        cmd += ["--executor", executor]
    t0 = time.perf_counter()
    # started from a fresh small launcher: the run's peak RSS is its own, not this process's
    launched = peak_rss.Launched(cmd, env=env, cwd=ROOT)
    sampler = Sampler(launched.proc.pid)
    done = launched.wait()
    wall = time.perf_counter() - t0
    sampler.stop()
    if done.returncode != 0:
        raise SystemExit(f"citeaudit run failed ({done.returncode}) for {answers} answers")
    steps = _attribute(_step_intervals(home), sampler.samples)
    return {"answers": answers, "executor": executor or "default", "derived": str(derived),
            "wall_s": wall, "cpu_s": done.cpu_s,
            "peak_rss_mb": done.peak_mb, "steps": steps}


def _print(night: dict) -> None:
    print(f"\n{night['answers']:,} answers, cold `citeaudit run` (executor "
          f"{night['executor']})")
    print("| step | wall s | CPU s | peak RSS MB |")
    print("|---|---:|---:|---:|")
    for key, s in sorted(night["steps"].items(), key=lambda kv: -kv[1]["wall_s"]):
        print(f"| {key} | {s['wall_s']:.1f} | {s['cpu_s']:.1f} | {s['peak_rss_mb']:.0f} |")
    print(f"| **total (process)** | {night['wall_s']:.1f} | {night['cpu_s']:.1f} | "
          f"{night['peak_rss_mb']:.0f} |", flush=True)


# Columns that hold the wall clock of the run that wrote them: two cold runs differ there only.
WALL_CLOCK = {"scholarly_records": ("fetched_at",)}


def compare_trees(a: Path, b: Path) -> list[str]:
    """Every parquet file of two derived trees compared: the relative paths whose bytes differ
    (after dropping the ``WALL_CLOCK`` columns, compared as tables), or present in one only."""
    import hashlib

    import pyarrow.parquet as pq

    def files(root: Path) -> dict[str, Path]:
        return {f.relative_to(root).as_posix(): f for f in root.rglob("*.parquet")}

    left, right = files(a), files(b)
    differ = sorted(left.keys() ^ right.keys())
    for rel in sorted(left.keys() & right.keys()):
        x, y = left[rel].read_bytes(), right[rel].read_bytes()
        if hashlib.sha256(x).digest() == hashlib.sha256(y).digest():
            continue
        drop = WALL_CLOCK.get(rel.split("/", 1)[0])
        if drop:
            tx, ty = pq.read_table(left[rel]), pq.read_table(right[rel])
            if tx.drop_columns(list(drop)).equals(ty.drop_columns(list(drop))):
                continue
        differ.append(rel)
    return differ


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", default="25000,50000,100000",
                        help="comma-separated day sizes (default: 25000,50000,100000)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the figures here")
    parser.add_argument("--executor", help="citeaudit run --executor (default: its default)")
    parser.add_argument("--keep", default="cold",
                        help="folder under the size's cache for this run's derived outputs and "
                        "instance (default: cold; two names keep two runs to compare)")
    parser.add_argument("--compare", nargs=2, metavar=("KEEP_A", "KEEP_B"),
                        help="compare every parquet file of two kept runs of --answers (no run)")
    args = parser.parse_args()
    if args.compare:
        n = int(args.answers.split(",")[0])
        cache = HERE / ".cache" / f"nightly-{n}-s{args.seed}"
        a, b = (cache / k / "derived" for k in args.compare)
        differ = compare_trees(a, b)
        total = len(list(a.rglob("*.parquet")))
        print(f"{total} parquet files in {a}; {len(differ)} differ in {b}"
              + "".join(f"\n  {d}" for d in differ))
        return 1 if differ else 0
    sizes = sorted({int(x) for x in args.answers.split(",") if x.strip()})
    if not sizes or min(sizes) < 1:
        parser.error("--answers: one or more positive sizes, e.g. 25000,50000,100000")
    nights = []
    for n in sizes:
        night = run_night(n, args.seed, args.executor, args.keep)
        _print(night)
        nights.append(night)
    if len(nights) > 1:
        a, b = nights[0], nights[-1]
        print(f"\ngrowth {a['answers']:,} → {b['answers']:,} answers "
              f"({b['answers'] / a['answers']:.1f}× the answers): wall "
              f"{b['wall_s'] / a['wall_s']:.2f}×, CPU {b['cpu_s'] / a['cpu_s']:.2f}×, "
              f"peak RSS {b['peak_rss_mb'] / a['peak_rss_mb']:.2f}×")
    if args.json:
        args.json.write_text(json.dumps(nights, indent=2) + "\n")
    print(f"(the benchmark process itself: {peak_rss.own_peak_mb():.0f} MB peak RSS)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
