"""Benchmark: the metrics table and the HTML report of one date × codebook, and how the
metrics step grows with the day.

Writes synthetic contract-shaped tables (answers, claims, citations, answer_checks,
rejected_inputs, citation_existence, passage_checks, support_labels, metadata_checks,
omission_endpoints, review_queue, annotation_agreement) for each size in ``--answers`` into
``benchmarks/.cache/metrics-N/`` (reused when present), then, per size, runs
:func:`citeaudit.metrics.compute_partition` in a child process of its own, once with the units
kept in DuckDB (the pipeline's path) and once on the in-memory reference path
(``tests/metrics/reference_metrics.py``: units as one Arrow table, a pandas frame; the tests
compare against it, so it lives there), interleaved ``--repeat`` times:
wall and CPU seconds of the computation, the child's peak RSS and its RSS with only the
imports loaded. It checks that both paths give the same table (exit 1 if a count, status,
method or note differs, or a float by more than 1e-12 relative), then times
:func:`citeaudit.report.render.build` once. With two sizes or more it prints the growth from
the smallest to the largest. ``--derived DIR --date D --codebook V`` measures one partition of
a real run instead (e.g. a ``bench_nightly`` derived folder), nothing generated.

    .venv/bin/python benchmarks/bench_metrics.py [--answers 25000,100000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from peak_rss import own_peak_mb  # noqa: E402

from citeaudit import parquet_io
from citeaudit.metrics import compute_partition, inputs
from citeaudit.report import render

ROOT = Path(__file__).resolve().parent.parent

DATE, VERSION = "2026-11-01", "v1"
ENGINES = np.array(["perplexity", "copilot", "google_ai_overview", "inhouse_rag"])
DOMAINS = np.array(["health", "finance", "legal", "consumer_products", "technology", "news"])
BANDS = np.array(["high", "medium", "low"])


def _write(derived: Path, name: str, cols: dict, judged: bool) -> None:
    part = {"observation_date": DATE, **({"codebook": VERSION} if judged else {})}
    parquet_io.write_partition(pa.table(cols), derived, name, part)


def _pick(rng: np.random.Generator, values: list[str], p: list[float], n: int) -> np.ndarray:
    return np.array(values, dtype=object)[rng.choice(len(values), size=n, p=p)]


def build(derived: Path, n_answers: int, seed: int = 1) -> int:
    """Write every input table; return the number of citations."""
    rng = np.random.default_rng(seed)
    aidx = np.arange(n_answers)
    query = aidx // 4
    n_q = int(query.max()) + 1
    q_dom = rng.integers(0, 6, n_q)
    q_band = rng.integers(0, 3, n_q)
    ip = np.round(0.1 + 0.9 * rng.random((6, 3)), 2)
    answer_id = np.char.add("a", aidx.astype(str)).astype(object)
    query_id = np.char.add("q", query.astype(str)).astype(object)
    _write(derived, "answers", {
        "answer_id": answer_id, "query_id": query_id, "engine": ENGINES[aidx % 4],
        "domain": DOMAINS[q_dom[query]], "risk_band": BANDS[q_band[query]],
        "inclusion_prob": ip[q_dom[query], q_band[query]],
        "input_tokens": rng.integers(500, 4000, n_answers),
        "output_tokens": rng.integers(20, 400, n_answers)}, False)
    verified = rng.random(n_answers) < 0.85
    _write(derived, "answer_checks", {
        "answer_id": answer_id, "verdict": np.where(verified, "verified", "rejected"),
        "served": verified,
        "reason": np.where(verified, None, "missing_citation"),
        "input_tokens": rng.integers(500, 4000, n_answers),
        "output_tokens": rng.integers(20, 400, n_answers)}, False)
    k = n_answers // 100
    _write(derived, "rejected_inputs", {
        "source": ["answers"] * k, "source_file": ["answers/x.jsonl"] * k,
        "source_line": np.arange(k),
        "field": ["answer_id"] * k, "reason": ["missing_field"] * k, "detail": [None] * k,
        "raw": ["{}"] * k}, False)
    claim_answer = np.repeat(aidx, 3)
    n_claims = claim_answer.size
    claim_id = np.char.add("c", np.arange(n_claims).astype(str)).astype(object)
    n_cit = rng.choice(4, size=n_claims, p=[0.1, 0.5, 0.3, 0.1])
    worthy = _pick(rng, [True, False, None], [0.87, 0.1, 0.03], n_claims)
    _write(derived, "claims", {
        "answer_id": answer_id[claim_answer], "claim_id": claim_id,
        "claim_index": np.tile(np.arange(3), n_answers), "verification_worthy":
        pa.array(list(worthy), pa.bool_()), "n_citations": n_cit}, False)
    cit_claim = np.repeat(np.arange(n_claims), n_cit)
    n = cit_claim.size
    cit_answer = answer_id[claim_answer[cit_claim]]
    citation_id = np.char.add("t", np.arange(n).astype(str)).astype(object)
    keys = {"answer_id": cit_answer, "claim_id": claim_id[cit_claim], "citation_id": citation_id}
    _write(derived, "citations", {**keys, "url": np.char.add("https://e.org/",
           np.arange(n).astype(str)).astype(object), "title": ["a title"] * n}, False)
    state = _pick(rng, ["pass", "dead", "changed", "unresolved"], [0.8, 0.06, 0.06, 0.08], n)
    _write(derived, "citation_existence", {**keys, "verdict": state,
           "reason": ["r"] * n, "drift_seconds": rng.random(n),
           "capture_time": [f"{DATE}T06:00:00+00:00"] * n,
           "final_uri": ["https://example.org/"] * n, "final_status": np.full(n, 200),
           "payload_sha256": ["ab" * 32] * n}, True)
    _write(derived, "passage_checks", {**keys, "verdict": _pick(
        rng, ["located", "shifted", "normalized", "absent", "unresolved"],
        [0.6, 0.1, 0.05, 0.15, 0.1], n)}, True)
    label = _pick(rng, ["fully_supported", "partially_supported", "unsupported", "contradicted",
                        "unresolved"], [0.6, 0.15, 0.12, 0.05, 0.08], n)
    _write(derived, "support_labels", {**keys, "verdict": label,
           "n_judgments": np.full(n, 2), "queued": label != "fully_supported"}, True)
    q = label != "fully_supported"
    _write(derived, "review_queue", {k: v[q] for k, v in keys.items()} | {
        "reason": label[q]}, True)
    _write(derived, "annotation_agreement", {
        "stratum": ["overall"], "statistic": ["krippendorff_alpha"], "annotator_a": [None],
        "annotator_b": [None], "label_a": [None], "label_b": [None], "value": [0.7],
        "n": [n], "note": [None]}, True)
    m = rng.random(n) < 0.2
    _write(derived, "metadata_checks", {k: v[m] for k, v in keys.items()} | {
        "verdict": _pick(rng, ["consistent", "mismatch", "not_found", "unmatched",
                               "unresolved"], [0.7, 0.1, 0.05, 0.05, 0.1], int(m.sum()))},
        True)
    r_o = _pick(rng, [1, 0, None], [0.1, 0.8, 0.1], n)
    _write(derived, "omission_endpoints", {
        "tuple_digest": np.char.add("tup", np.arange(n).astype(str)).astype(object),
        "answer_id": cit_answer, "source_url": ["https://e.org/"] * n,
        "source_role": ["affiliate"] * n, "r_o": pa.array(list(r_o), pa.int8()),
        "priority": rng.random(n), "policy_action": np.where(
            pa.array(list(r_o), pa.int8()).is_null(), "REVIEW", "PASS")}, True)
    return n


def child(derived: Path, date: str, version: str, path: str, out: Path) -> None:
    """One metrics computation in this process: prints its figures as one JSON line."""
    # the reference is imported in both children, so both start with the same modules loaded
    from tests.metrics.reference_metrics import counts_and_units  # PYTHONPATH: the checkout

    base = own_peak_mb()
    t, c = time.perf_counter(), time.process_time()
    result = compute_partition(derived, date, version,
                               units=counts_and_units if path == "in_memory" else None)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    peak = own_peak_mb()
    parquet_io.write_partition(result.table, out, "metrics",
                               {"observation_date": date, "codebook": version})
    print(json.dumps({"wall_s": wall, "cpu_s": cpu, "peak_rss_mb": peak,
                      "imports_rss_mb": base, "rows": result.table.num_rows}))


def run_child(derived: Path, date: str, version: str, path: str, out: Path) -> dict:
    """Run :func:`child` in a fresh interpreter (its own peak RSS) and read its figures."""
    cmd = [sys.executable, __file__, "--child", path, "--derived", str(derived),
           "--date", date, "--codebook", version, "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{path} child failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(derived: Path, date: str, version: str, repeat: int, work: Path) -> dict:
    """Both paths, interleaved ``repeat`` times: best wall (with its CPU), highest peak RSS;
    exits 1 if their tables differ."""
    figures: dict[str, dict] = {}
    for _ in range(repeat):
        for path in ("duckdb", "in_memory"):
            f = run_child(derived, date, version, path, work / path)
            best = figures.get(path)
            if best is None or f["wall_s"] < best["wall_s"]:
                figures[path] = {**f, "peak_rss_mb": max(f["peak_rss_mb"],
                                                         (best or f)["peak_rss_mb"])}
            else:
                best["peak_rss_mb"] = max(best["peak_rss_mb"], f["peak_rss_mb"])
    tables = [pq.read_table(parquet_io.partition_dir(
        work / p, "metrics", {"observation_date": date, "codebook": version})
        / parquet_io.DATA_FILE) for p in ("duckdb", "in_memory")]
    figures["equal"] = tables[0].equals(tables[1])
    figures["same"], figures["floats_differing"], figures["worst_relative"] = _compare(*tables)
    return figures


def _compare(a: pa.Table, b: pa.Table) -> tuple[bool, int, float]:
    """(every non-float column equal, float cells that differ, their worst relative
    difference): the order DuckDB emits a metric's units in can move a float sum's last bit."""
    floats = [f.name for f in a.schema if pa.types.is_floating(f.type)]
    same = a.num_rows == b.num_rows and all(
        a[c].equals(b[c]) for c in a.column_names if c not in floats)
    differing, worst = 0, 0.0
    for c in floats:
        x = a[c].to_numpy(zero_copy_only=False).astype(np.float64)
        y = b[c].to_numpy(zero_copy_only=False).astype(np.float64)
        both = ~(np.isnan(x) & np.isnan(y))
        off = both & (x != y)
        differing += int(off.sum())
        if off.any():
            scale = np.maximum(np.abs(x[off]), np.abs(y[off]))
            worst = max(worst, float(np.max(np.abs(x[off] - y[off]) / scale)))
    return same, differing, worst


def _line(label: str, f: dict) -> str:
    return (f"| {label} | {f['wall_s']:.2f} | {f['cpu_s']:.2f} | {f['peak_rss_mb']:,.0f} | "
            f"{f['peak_rss_mb'] - f['imports_rss_mb']:,.0f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--answers", default="25000,100000",
                    help="comma-separated day sizes (synthetic inputs)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--derived", type=Path, help="measure this derived folder instead")
    ap.add_argument("--date", default=DATE)
    ap.add_argument("--codebook", default=VERSION)
    ap.add_argument("--child", choices=("duckdb", "in_memory"), help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.derived, args.date, args.codebook, args.child, args.out)
        return
    cache = Path(__file__).resolve().parent / ".cache"
    if args.derived:
        sizes = [(str(args.derived), args.derived)]
    else:
        sizes = []
        for n in (int(x) for x in args.answers.split(",")):
            derived = cache / f"metrics-{n}"
            if not (derived / "omission_endpoints").is_dir():
                t0 = time.perf_counter()
                cites = build(derived, n)
                print(f"inputs: {n:,} answers, {n * 3:,} claims, {cites:,} citations "
                      f"({time.perf_counter() - t0:.1f} s to write)", flush=True)
            sizes.append((f"{n:,} answers", derived))
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| day | path | wall s | CPU s | peak RSS MB | over imports MB |")
    print("|---|---|---:|---:|---:|---:|")
    results, ok = [], True
    for label, derived in sizes:
        work = cache / "metrics-out" / label.split()[0].replace(",", "")
        f = measure(derived, args.date, args.codebook, args.repeat, work)
        ok = ok and f["same"] and f["worst_relative"] < 1e-12
        results.append((label, f))
        for path in ("duckdb", "in_memory"):
            print(_line(f"{label} | {path}", f[path]), flush=True)
        verdict = ("equal, value for value" if f["equal"] else
                   f"counts, statuses, methods and notes equal; {f['floats_differing']} float "
                   f"cells differ, at most {f['worst_relative']:.1e} relative"
                   if f["same"] else "DIFFER")
        print(f"({label}: {f['duckdb']['rows']:,} metrics rows; tables {verdict})", flush=True)
    if len(results) > 1:
        (a, fa), (b, fb) = results[0], results[-1]
        for path in ("duckdb", "in_memory"):
            x, y = fa[path], fb[path]
            own = ((y["peak_rss_mb"] - y["imports_rss_mb"])
                   / (x["peak_rss_mb"] - x["imports_rss_mb"]))
            print(f"growth {a} -> {b}, {path}: CPU {y['cpu_s'] / x['cpu_s']:.2f}x, "
                  f"wall {y['wall_s'] / x['wall_s']:.2f}x, peak RSS "
                  f"{y['peak_rss_mb'] / x['peak_rss_mb']:.2f}x (over imports {own:.2f}x)")
    label, derived = results[-1][0], sizes[-1][1]
    out = cache / "metrics-out" / label.split()[0].replace(",", "") / "duckdb"
    for name in inputs.DAILY + inputs.JUDGED:
        src = derived / name
        if src.is_dir() and not (out / name).exists():
            (out / name).symlink_to(src.resolve(), target_is_directory=True)
    t = time.perf_counter()
    page = render.build(out, args.date, args.codebook)
    print(f"report ({label}): {page.path.stat().st_size / 1024:,.0f} KiB in "
          f"{time.perf_counter() - t:.2f} s")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if not ok:
        raise SystemExit("the DuckDB path and the in-memory reference differ beyond a float "
                         "sum's last bits")


if __name__ == "__main__":
    main()
