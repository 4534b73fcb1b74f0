"""Benchmark the evidence locator (``support_evidence``) against a whole ``citeaudit run``.

Run: ``.venv/bin/python benchmarks/bench_evidence.py [--answers 20000]`` (``make bench``), or
``--raw R --derived D`` to time the locator on the partitions of a run already made (e.g. a
``bench_nightly.py`` night: ``benchmarks/.cache/nightly-25000-s7/{raw,cold/derived}``).

Generates a one-day demo corpus of N answers under a temporary folder, times ``citeaudit run``
over it (which includes ``support_evidence``), then times the locator again on its own on the
run's own partitions (atomize, windows, terms, BM25, flags), each way in its own child process
so its peak RSS is its own: *whole* (``support_evidence`` of
``tests/support/reference_evidence.py``: every pair in one DuckDB query, the reference the
tests check against) and *batched* (``evidence.support_evidence_batches`` as the asset runs
it: page batches, spilled, sorted by DuckDB, written row group by row group). Prints a Markdown
table: atoms × passages scored per second (every atom against every passage window of its cited
page), rows, seconds, peak RSS (and the RSS with only the inputs loaded), the locator's time as
a share of the run, and whether the two files hold the same table. Target: at most half the
run's time; the batched path's memory bounded by a batch, not by the day.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent  # on the child's path: it imports tests.support

CHILD = r"""
import json, sys, tempfile, time
from pathlib import Path
from benchmarks.peak_rss import own_peak_mb
from citeaudit import codebook, duck, parquet_io
from citeaudit.support import evidence
from tests.support.reference_evidence import support_evidence
raw, derived, date, mode = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
out = Path(sys.argv[5])
day = {"observation_date": date}; part = {**day, "codebook": "v1"}
book = codebook.load_version(raw, "v1")
inputs = [parquet_io.read_partition(derived, n, day) for n in ("claims", "citations", "answers")]
aligned = parquet_io.read_partition(derived, "citation_captures", part)
texts = parquet_io.read_partition(derived, "payload_texts", part)
before = own_peak_mb()
t = time.perf_counter()
if mode == "whole":
    path = parquet_io.write_partition(support_evidence(*inputs, aligned, texts, book),
                                      out, "support_evidence", part)
else:
    with tempfile.TemporaryDirectory() as work:
        path = parquet_io.write_partition_batches(evidence.support_evidence_batches(
            *inputs, aligned, texts, book, Path(work)), None, out, "support_evidence", part)
secs = time.perf_counter() - t
con = duck.connect()
rows, located = con.sql("SELECT count(*), count(payload_sha256) FROM read_parquet($p)",
                        params={"p": str(path)}).fetchall()[0]
print(json.dumps({"seconds": secs, "rows": rows, "located_rows": located, "path": str(path),
                  "inputs_rss_mb": before,
                  "peak_rss_mb": own_peak_mb()}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--answers", type=int, default=20_000)
    ap.add_argument("--raw", type=Path, help="raw folder of a run already made (with --derived)")
    ap.add_argument("--derived", type=Path, help="derived folder of that run")
    args = ap.parse_args()
    venv_bin = Path(sys.executable).parent
    with tempfile.TemporaryDirectory(prefix="bench-evidence-") as tmp:
        root = Path(tmp)
        if args.derived:
            raw, derived, run_secs = args.raw, args.derived, None
        else:
            raw, derived, run_secs = _run(root, args.answers, venv_bin)
        truth = json.loads((raw / "ground_truth.json").read_text(encoding="utf-8"))
        date = truth["dates"][0]
        got = {}
        for mode in ("whole", "batched"):
            out = subprocess.run([sys.executable, "-c", CHILD, str(raw), str(derived), date,
                                  mode, str(root / mode)],
                                 check=True, capture_output=True, text=True,
                                 env={**os.environ, "PYTHONPATH": str(ROOT)})
            got[mode] = json.loads(out.stdout.strip().splitlines()[-1])
        same = pq.read_table(got["whole"]["path"]).equals(pq.read_table(got["batched"]["path"]))
        scored = _scored_pairs(raw, derived, date)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; same table both ways: {same}")
    print("| answers | citeaudit run s | path | locator s | share of run | support_evidence rows "
          "| atoms × passages | per second | peak RSS MB (inputs only) |")
    print("|---|---|---|---|---|---|---|---|---|")
    answers = truth.get("generator", {}).get("answers", args.answers) if args.derived \
        else args.answers
    for mode, r in got.items():
        share = f"{r['seconds'] / run_secs:.1%}" if run_secs else "–"
        run = f"{run_secs:.1f}" if run_secs else "–"
        print(f"| {answers:,} | {run} | {mode} | {r['seconds']:.2f} | {share} | {r['rows']:,} | "
              f"{scored:,} | {scored / r['seconds']:,.0f} | {r['peak_rss_mb']:.0f} "
              f"({r['inputs_rss_mb']:.0f}) |")
    if not same:
        raise SystemExit("the batched path's table differs from the whole path's")


def _run(root: Path, answers: int, venv_bin: Path) -> tuple[Path, Path, float]:
    """Generate a one-day corpus of ``answers`` answers and time ``citeaudit run`` over it."""
    raw, derived, home = root / "raw", root / "derived", root / "home"
    home.mkdir()
    shutil.copyfile(Path(__file__).resolve().parent.parent / "dagster.yaml",
                    home / "dagster.yaml")
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    subprocess.run([venv_bin / "citeaudit", "demo-corpus", "--out", str(raw), "--answers",
                    str(answers), "--days", "1", "--no-progress"], check=True,
                   env=env, stdout=subprocess.DEVNULL)
    t = time.perf_counter()
    subprocess.run([venv_bin / "citeaudit", "run", "--raw", str(raw), "--derived",
                    str(derived), "--quiet"], check=True, env=env, stdout=subprocess.DEVNULL)
    return raw, derived, time.perf_counter() - t


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
