"""Benchmark the source-risk stage against the source-risk specification's reference figures and the
project's targets.

Run: ``.venv/bin/python benchmarks/bench_source_risk.py`` (``make bench``). Options:
``--tuples N`` (endpoint rows, default 10,000,000), ``--records N,M`` (validation sizes, default
100,000 and 1,000,000, each in its own child process), ``--repeat N`` (median of N for the
endpoint).

a. Endpoint: N tuples (I, A, M, D TINYINT, ~20% NULL each) in a parquet file generated once
   (deterministic) under ``benchmarks/.cache/``. Bare scan: DuckDB sums the four columns.
   Endpoint: ``sql/source_risk/resolve_omission.sql`` over the same file, grouped by r_o.
   Target: endpoint <= 3x the bare scan.
b. Validation + audit: N demo-shaped records in a JSONL file (evidence quotes checked against
   answer texts, a 10% share with unresolved predicates, 1% revisions naming their parent's
   record digest, 0.5% malformed lines) against an ``answers`` partition of N/4 answers,
   through ``citeaudit.source_risk.audit.write``, exactly as the asset runs it: lines read and
   dated in batches, parsed, typed, sealed (snapshot, tuple and record SHA-256 in hashlib),
   checked in order, lineage over the key table, the ledger and rejections streamed to
   parquet, then the endpoints (current view, R_O, priority, policy) and the claim ledger.
   Each size runs in a child process: wall, CPU and its own peak RSS (``os.wait4`` from a
   fresh small launcher, ``peak_rss.run``: nothing of this parent inherited), and the
   wall and CPU seconds per phase (read = reading and dating the JSONL; hash_lines = the
   raw-line digests; validate = typing, sealing, hashing and the ordered checks, one DuckDB
   statement per batch; keep = the batch files and key table; lineage; then each write).
   hash_lines, validate and keep count the CPU of the thread that validated the batch
   (summed over the worker threads when ``validate.WORKERS`` > 1, when their wall seconds can
   exceed the run's); the other phases' CPU counts every thread of the process.
   Targets: <= 25 us per record, <= 1 GB peak RSS at 1,000,000 records.

The specification reports 0.49 us/tuple (endpoint loop) and 51.2 us/record (validation plus audit)
on
an Intel Xeon Platinum 8573C, single process, pure Python: the ratios printed are against
those figures (the specification's scripts are not shipped, so they are not re-run here).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import peak_rss  # noqa: E402

from citeaudit import duck, parquet_io  # noqa: E402
from citeaudit.codebook import validate as validate_codebook  # noqa: E402
from citeaudit.demo_corpus.codebooks import codebook as demo_codebook  # noqa: E402
from citeaudit.source_risk import audit  # noqa: E402

CACHE = ROOT / "benchmarks" / ".cache"
DATE = "2026-11-01"
SEED_ENDPOINT_US = 0.49
SEED_VALIDATION_US = 51.2


def tuples_file(n: int) -> Path:
    path = CACHE / f"source_risk_tuples_{n}.parquet"
    if path.is_file():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    con = duck.connect()
    con.execute("SELECT setseed(0.42)")
    tmp = path.with_suffix(".tmp")
    con.execute(
        "COPY (SELECT "
        + ", ".join(f"CASE WHEN random() < 0.2 THEN NULL ELSE (random() < 0.5)::TINYINT END "
                    f"AS {c}" for c in "IAMD")
        + f" FROM range({int(n)})) TO '{tmp}' (FORMAT parquet, COMPRESSION zstd)")
    os.replace(tmp, path)
    return path


def bench_endpoint(n: int, repeat: int) -> dict:
    path = tuples_file(n)
    con = duck.connect(isolated=True)
    con.execute("SET threads = 1")
    bare_sql = f"SELECT sum(I), sum(A), sum(M), sum(D) FROM read_parquet('{path}')"
    con.execute(f"CREATE VIEW sr_tuples AS SELECT I, A, M, D FROM read_parquet('{path}')")
    text = duck.sql_text("source_risk/resolve_omission")
    bare, ends = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        con.sql(bare_sql).fetchall()
        bare.append(time.perf_counter() - t)
        t = time.perf_counter()
        counts = con.sql(text).aggregate("r_o, count(*) AS n", "r_o").fetchall()
        ends.append(time.perf_counter() - t)
    b, e = statistics.median(bare), statistics.median(ends)
    return {"tuples": n, "bare_s": b, "endpoint_s": e, "ratio": e / b,
            "ns_per_tuple": e / n * 1e9, "r_o_counts": sorted(counts, key=str)}


def _answer_text(i: int) -> str:
    return (f"Answer {i}. The widget {i} lasts {i % 97} hours on a charge. "
            f"It is sold by shop {i % 13}.")


def corpus(n: int) -> Path:
    """A raw folder and a derived ``answers`` partition for ``n`` records (built once, cached):
    ``<cache>/source_risk_<n>/{raw,derived}``."""
    base = CACHE / f"source_risk_{n}"
    if (base / "done").is_file():
        return base
    raw, derived = base / "raw", base / "derived"
    (raw / "answers" / DATE).mkdir(parents=True, exist_ok=True)
    folder = raw / "annotations" / "source_risk"
    folder.mkdir(parents=True, exist_ok=True)
    answers = max(1, n // 4)
    observed = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    table = pa.table({
        "answer_id": [f"a{i}" for i in range(answers)],
        "query_id": [f"q{i}" for i in range(answers)],
        "query_text": [f"query {i}" for i in range(answers)],
        "answer_text": [_answer_text(i) for i in range(answers)],
        "observed_at": pa.array([observed] * answers, pa.timestamp("us", tz="UTC")),
    })
    parquet_io.write_partition(table, derived, "answers", {"observation_date": DATE})
    rng = random.Random(7)
    book = validate_codebook(demo_codebook("v1"), "v1.yaml")
    roles = sorted(book.source_roles)
    tmp = folder / f".{DATE}.jsonl.{os.getpid()}.tmp"
    previous = None
    with tmp.open("w", encoding="utf-8") as fh:
        for k in range(n):
            i = k % answers
            text = _answer_text(i)
            quote = f"The widget {i} lasts {i % 97} hours on a charge."
            start = text.index(quote)
            span = {"snapshot": "answer", "start": start, "end": start + len(quote),
                    "quote": quote}
            src = {"snapshot": "source", "start": 10, "end": 10 + 40, "quote": "x" * 40}
            preds = {"I": 1, "A": 1, "M": rng.choice((0, 1)), "D": rng.choice((0, 1))}
            if rng.random() < 0.1:
                preds[rng.choice("IAMD")] = None
            ev = {"I": src, "A": span, "M": src, "D": span}
            rec = {"query_id": f"q{i}", "answer_id": f"a{i}", "claim_id": f"c{i}",
                   "source_url": f"https://shop{k % 13}.example/p/{k}",
                   "source_role": roles[k % len(roles)], "codebook_version": "v1",
                   "annotator_id": "sr-ann-01", "annotated_at": "2026-11-02T00:00:00Z",
                   "predicates": preds,
                   "evidence": {p: ev[p] for p in preds if preds[p] is not None},
                   "dimensions": {"d_Q": 0.5, "d_R": 0.75, "d_H": round(rng.random(), 3),
                                  "d_E": 1.0},
                   "parent_record": None}
            draw = rng.random()
            if draw < 0.005:
                fh.write('{"answer_id": "a1", "broken": \n')
                continue
            if draw < 0.015 and previous is not None:  # a revision of the record before
                rec = dict(previous[0], annotator_id="sr-adjudicator",
                           parent_record=hashlib.sha256(previous[1].encode()).hexdigest())
            line = json.dumps(rec)
            fh.write(line + "\n")
            previous = (rec, line)
    os.replace(tmp, folder / f"{DATE}.jsonl")
    (base / "done").write_text("ok\n")
    return base


def child(n: int) -> None:
    """One validation + audit run (in this process); prints its figures as one JSON line."""
    base = corpus(n)
    book = validate_codebook(demo_codebook("v1"), "v1.yaml")
    with tempfile.TemporaryDirectory(prefix="bench-source-risk-") as work:
        derived = Path(work) / "derived"
        derived.mkdir()
        (derived / "answers").symlink_to(base / "derived" / "answers", target_is_directory=True)
        start = time.perf_counter()
        written = audit.write(base / "raw", derived, DATE, book)
        wall = time.perf_counter() - start
        sizes = {k: p.stat().st_size for k, p in written.paths.items()}
        accepted = pq.ParquetFile(written.paths["source_risk_records"]).metadata.num_rows
    print(json.dumps({"records": n, "lines": written.lines, "wall_s": wall,
                      "rows": written.rows, "accepted": accepted, "bytes": sizes,
                      "seconds": written.seconds, "cpu_seconds": written.cpu_seconds}))


def bench_validation(n: int) -> dict:
    """Run :func:`child` for ``n`` records in a fresh process: its result, CPU and peak RSS."""
    corpus(n)  # built outside the measured process
    with tempfile.TemporaryFile(mode="w+") as out:
        done = peak_rss.run([sys.executable, __file__, "--child", str(n)], stdout=out)
        out.seek(0)
        text = out.read()
    if done.returncode != 0:
        raise SystemExit(f"child for {n} records failed (exit {done.returncode})")
    result = json.loads(text.strip().splitlines()[-1])
    result["cpu_s"] = done.cpu_s
    result["peak_mb"] = done.peak_mb
    result["us_per_record"] = result["wall_s"] / n * 1e6
    result["cpu_us_per_record"] = result["cpu_s"] / n * 1e6
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tuples", type=int, default=10_000_000, help="endpoint tuples")
    ap.add_argument("--records", default="100000,1000000",
                    help="validation sizes, comma-separated (each in its own process)")
    ap.add_argument("--repeat", type=int, default=5, help="endpoint repeats (median kept)")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return
    e = bench_endpoint(args.tuples, args.repeat)
    print(f"endpoint: {e['tuples']:,} tuples: bare scan {e['bare_s']:.3f} s, endpoint "
          f"{e['endpoint_s']:.3f} s, ratio {e['ratio']:.2f}x (target <= 3x), "
          f"{e['ns_per_tuple']:.1f} ns/tuple; r_o counts {e['r_o_counts']}", flush=True)
    runs = []
    for n in (int(x) for x in args.records.split(",")):
        v = bench_validation(n)
        runs.append(v)
        phases = ", ".join(f"{k} {s:.2f}" for k, s in sorted(
            v["seconds"].items(), key=lambda kv: -kv[1]))
        print(f"validation + audit: {n:,} records ({v['lines']:,} lines) in {v['wall_s']:.2f} s"
              f" wall = {v['us_per_record']:.2f} us/record, {v['cpu_s']:.2f} s CPU = "
              f"{v['cpu_us_per_record']:.2f} us/record "
              f"(target <= 25), peak RSS {v['peak_mb']:,.0f} MB; rows {v['rows']}; "
              f"seconds per phase: {phases}", flush=True)
    print("\n| measure | specification (Python reference) | here | ratio (spec / here) | target |")
    print("|---|---|---|---|---|")
    us = e["ns_per_tuple"] / 1000
    print(f"| endpoint, {e['tuples']:,} tuples | {SEED_ENDPOINT_US} us/tuple | {us:.4f} us/tuple "
          f"({e['ratio']:.2f}x bare scan) | {SEED_ENDPOINT_US / us:.0f}x | <= 3x bare scan |")
    for v in runs:
        print(f"| validation + audit, {v['records']:,} records | {SEED_VALIDATION_US} us/record "
              f"| {v['us_per_record']:.2f} us/record, peak RSS {v['peak_mb']:,.0f} MB "
              f"| {SEED_VALIDATION_US / v['us_per_record']:.1f}x "
              f"| <= 25 us/record, <= 1 GB at 1,000,000 |")
    print(f"\nload average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for v in runs:
        n = v["records"]
        for label, key in (("wall", "seconds"), ("CPU, all threads", "cpu_seconds")):
            print(f"phases at {n:,} records, {label} (us/record): " + ", ".join(
                f"{k} {s / n * 1e6:.2f}" for k, s in sorted(v[key].items(),
                                                           key=lambda kv: -kv[1])))


if __name__ == "__main__":
    main()
