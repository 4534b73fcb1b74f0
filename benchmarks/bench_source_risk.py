"""Benchmark the source-risk stage against seed 000 §IV-E and the project's targets.

Run: ``.venv/bin/python benchmarks/bench_source_risk.py`` (``make bench``). Options:
``--tuples N`` (endpoint rows, default 10,000,000), ``--records N`` (validation rows, default
1,000,000), ``--repeat N`` (median of N for the endpoint), ``--runs N`` (validation runs, best
kept).

a. Endpoint: N tuples (I, A, M, D TINYINT, ~20% NULL each) in a parquet file generated once
   (deterministic) under ``benchmarks/.cache/``. Bare scan: DuckDB sums the four columns.
   Endpoint: ``sql/source_risk/resolve_omission.sql`` over the same file, grouped by r_o.
   Target: endpoint <= 3x the bare scan.
b. Validation + audit: N demo-shaped JSONL records (with evidence quotes checked against answer
   texts, a 10% share with unresolved predicates and 1% revisions) against an answers table,
   through ``citeaudit.source_risk.validate.validate`` (parse, type, seal: snapshot, tuple and
   record SHA-256 in hashlib, ordered checks, lineage) and ``endpoint.endpoints`` (current
   view, R_O, priority, policy). Target: <= 5 us per record.

Seed 000 reports 0.49 us/tuple (endpoint loop) and 51.2 us/record (validation plus audit) on
an Intel Xeon Platinum 8573C, single process, pure Python.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import statistics
import sys
import time
from pathlib import Path

import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from citeaudit import duck  # noqa: E402
from citeaudit.codebook import validate as validate_codebook  # noqa: E402
from citeaudit.demo_corpus.codebooks import codebook as demo_codebook  # noqa: E402
from citeaudit.source_risk import endpoint, validate  # noqa: E402

CACHE = ROOT / "benchmarks" / ".cache"


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
    con = duck.connect()
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


def _records(n: int, answers: int) -> tuple[pa.Table, pa.Table]:
    rng = random.Random(7)
    texts = [f"Answer {i}. The widget {i} lasts {i % 97} hours on a charge. "
             f"It is sold by shop {i % 13}." for i in range(answers)]
    ans = pa.table({
        "answer_id": [f"a{i}" for i in range(answers)],
        "query_id": [f"q{i}" for i in range(answers)],
        "query_sha256": [hashlib.sha256(f"query {i}".encode()).hexdigest()
                         for i in range(answers)],
        "answer_text": texts,
        "answer_sha256": [hashlib.sha256(t.encode()).hexdigest() for t in texts],
        "observed_at": ["2026-11-01T00:00:00Z"] * answers,
    }, schema=validate.ANSWERS_SCHEMA)
    lines = []
    for k in range(n):
        i = k % answers
        text = texts[i]
        quote = f"The widget {i} lasts {i % 97} hours on a charge."
        start = text.index(quote)
        span = {"snapshot": "answer", "start": start, "end": start + len(quote), "quote": quote}
        src = {"snapshot": "source", "start": 10, "end": 10 + 40, "quote": "x" * 40}
        preds = {"I": 1, "A": 1, "M": rng.choice((0, 1)), "D": rng.choice((0, 1))}
        if rng.random() < 0.1:
            preds[rng.choice("IAMD")] = None
        ev = {"I": src, "A": span, "M": src, "D": span}
        rec = {"query_id": f"q{i}", "answer_id": f"a{i}", "claim_id": f"c{i}",
               "source_url": f"https://shop{k % 13}.example/p/{k}",
               "source_role": "affiliate", "codebook_version": "v1",
               "annotator_id": "sr-ann-01", "annotated_at": "2026-11-02T00:00:00Z",
               "predicates": preds,
               "evidence": {p: ev[p] for p in preds if preds[p] is not None},
               "dimensions": {"d_Q": 0.5, "d_R": 0.75, "d_H": round(rng.random(), 3),
                              "d_E": 1.0},
               "parent_record": None}
        lines.append(json.dumps(rec))
    table = pa.table({"file": ["bench.jsonl"] * n, "line": pa.array(range(1, n + 1), pa.int64()),
                      "raw": lines}, schema=validate.LINES_SCHEMA)
    return table, ans


def bench_validation(n: int, runs: int) -> dict:
    lines, answers = _records(n, max(1, n // 4))
    book = validate_codebook(demo_codebook("v1"), "v1.yaml")
    settings = validate.Settings(book.priority_weights, tuple(sorted(book.source_roles)))
    best = None
    for _ in range(runs):
        t = time.perf_counter()
        result = validate.validate(lines, settings, answers=answers)
        t_valid = time.perf_counter() - t
        ends = endpoint.endpoints(duck.connect(), result.records, book)
        total = time.perf_counter() - t
        if best is None or total < best["total_s"]:
            best = {"records": n, "validate_s": t_valid, "total_s": total,
                    "us_per_record": total / n * 1e6, "accepted": result.records.num_rows,
                    "rejected": result.rejected.num_rows, "endpoints": ends.num_rows}
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tuples", type=int, default=10_000_000)
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--runs", type=int, default=1, help="validation runs (best kept)")
    args = ap.parse_args()
    e = bench_endpoint(args.tuples, args.repeat)
    print(f"endpoint: {e['tuples']:,} tuples: bare scan {e['bare_s']:.3f} s, endpoint "
          f"{e['endpoint_s']:.3f} s, ratio {e['ratio']:.2f}x (target <= 3x), "
          f"{e['ns_per_tuple']:.1f} ns/tuple; r_o counts {e['r_o_counts']}")
    v = bench_validation(args.records, args.runs)
    print(f"validation + audit: {v['records']:,} records in {v['total_s']:.2f} s "
          f"(validate {v['validate_s']:.2f} s) = {v['us_per_record']:.2f} us/record "
          f"(target <= 5); accepted {v['accepted']:,}, rejected {v['rejected']:,}, "
          f"endpoints {v['endpoints']:,}")
    print("\n| measure | seed 000 | here | target |\n|---|---|---|---|")
    print(f"| endpoint | 0.49 us/tuple | {e['ns_per_tuple'] / 1000:.4f} us/tuple "
          f"({e['ratio']:.2f}x bare scan) | <= 3x bare scan |")
    print(f"| validation + audit | 51.2 us/record | {v['us_per_record']:.2f} us/record | <= 5 |")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"| peak RSS of the process ({args.records:,} records) | | {peak:,.0f} MB "
          f"({peak * 1024 / args.records:.1f} KB/record) | <= 1 GB at 1,000,000 |")


if __name__ == "__main__":
    main()
