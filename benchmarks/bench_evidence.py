"""Benchmark the evidence locator (``support_evidence``) against a whole ``citeaudit run``.

Run: ``.venv/bin/python benchmarks/bench_evidence.py [--answers 20000]`` (``make bench``).

Generates a one-day demo corpus of N answers under a temporary folder, times ``citeaudit run``
over it (which includes ``support_evidence``), then times the locator again on its own on the
run's own partitions (atomize, windows, terms, BM25, flags: ``evidence.support_evidence``) in a
child process so its peak RSS is its own, and prints a Markdown table: atoms × passages scored
per second (every atom against every passage window of its cited page), rows, seconds, peak RSS,
and the locator's time as a share of the run. Target: at most half the run's time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from citeaudit import codebook, duck, parquet_io
from citeaudit.support import evidence
raw, derived, date = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
day = {"observation_date": date}; part = {**day, "codebook": "v1"}
book = codebook.load_version(raw, "v1")
inputs = [parquet_io.read_partition(derived, n, day) for n in ("claims", "citations", "answers")]
aligned = parquet_io.read_partition(derived, "citation_captures", part)
texts = parquet_io.read_partition(derived, "payload_texts", part)
t = time.perf_counter()
table = evidence.support_evidence(*inputs, aligned, texts, book)
secs = time.perf_counter() - t
con = duck.connect(); con.register("e", table); con.register("t", texts)
pairs = con.sql("SELECT count(*) FROM e WHERE payload_sha256 IS NOT NULL").fetchall()[0][0]
print(json.dumps({"seconds": secs, "rows": table.num_rows, "located_rows": pairs,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--answers", type=int, default=20_000)
    args = ap.parse_args()
    venv_bin = Path(sys.executable).parent
    with tempfile.TemporaryDirectory(prefix="bench-evidence-") as tmp:
        root = Path(tmp)
        raw, derived, home = root / "raw", root / "derived", root / "home"
        home.mkdir()
        shutil.copyfile(Path(__file__).resolve().parent.parent / "dagster.yaml",
                        home / "dagster.yaml")
        env = {**os.environ, "DAGSTER_HOME": str(home)}
        subprocess.run([venv_bin / "citeaudit", "demo-corpus", "--out", str(raw), "--answers",
                        str(args.answers), "--days", "1", "--no-progress"], check=True,
                       env=env, stdout=subprocess.DEVNULL)
        truth = json.loads((raw / "ground_truth.json").read_text(encoding="utf-8"))
        date = truth["dates"][0]
        t = time.perf_counter()
        subprocess.run([venv_bin / "citeaudit", "run", "--raw", str(raw), "--derived",
                        str(derived), "--quiet"], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        run_secs = time.perf_counter() - t
        out = subprocess.run([sys.executable, "-c", CHILD, str(raw), str(derived), date],
                             check=True, capture_output=True, text=True, env=env)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        scored = _scored_pairs(raw, derived, date)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; peak RSS of this process "
          f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MB (children)")
    print("| answers | citeaudit run s | locator s | share of run | support_evidence rows | "
          "atoms × passages | per second | locator peak RSS MB |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| {args.answers:,} | {run_secs:.1f} | {r['seconds']:.2f} | "
          f"{r['seconds'] / run_secs:.1%} | {r['rows']:,} | {scored:,} | "
          f"{scored / r['seconds']:,.0f} | {r['peak_rss_mb']:.0f} |")


def _scored_pairs(raw: Path, derived: Path, date: str) -> int:
    """Atoms × passage windows of their cited pages (the work BM25 covers)."""
    from citeaudit import codebook, duck, parquet_io
    from citeaudit.support import atoms, windows

    day = {"observation_date": date}
    part = {**day, "codebook": "v1"}
    book = codebook.load_version(raw, "v1")
    con = duck.connect()
    con.register("a", atoms.atomize(parquet_io.read_partition(derived, "claims", day),
                                    book.atomization))
    con.register("c", parquet_io.read_partition(derived, "citation_captures", part))
    con.register("w", windows.windows(parquet_io.read_partition(derived, "payload_texts", part),
                                      book.evidence.window_sentences))
    return con.sql("""
        WITH n AS (SELECT payload_sha256, count(*) AS n FROM w GROUP BY ALL)
        SELECT coalesce(sum(n.n), 0)::BIGINT FROM a JOIN c USING (claim_id)
        JOIN n USING (payload_sha256)""").fetchall()[0][0]


if __name__ == "__main__":
    main()
