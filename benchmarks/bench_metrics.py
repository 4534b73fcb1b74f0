"""Benchmark: the metrics table and the HTML report of one date × codebook at panel scale.

Writes synthetic contract-shaped tables (answers, claims, citations, answer_checks,
rejected_inputs, citation_existence, passage_checks, support_labels, metadata_checks,
omission_endpoints, review_queue, annotation_agreement) for ``--answers`` answers into
``benchmarks/.cache/metrics/``, then times :func:`citeaudit.metrics.compute_partition` and
:func:`citeaudit.report.render.build` (best of ``--repeat``), and prints rows, units and the
report's size. Usage: ``.venv/bin/python benchmarks/bench_metrics.py [--answers 20000]``.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from citeaudit import parquet_io
from citeaudit.metrics import compute_partition
from citeaudit.report import render

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
        "answer_id": answer_id, "verified": verified, "served": verified,
        "reason": np.where(verified, None, "missing_citation"),
        "input_tokens": rng.integers(500, 4000, n_answers),
        "output_tokens": rng.integers(20, 400, n_answers)}, False)
    k = n_answers // 100
    _write(derived, "rejected_inputs", {
        "source": ["answers"] * k, "file": ["answers/x.jsonl"] * k, "line": np.arange(k),
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
    state = _pick(rng, ["pass", "dead", "changed", "unknown"], [0.8, 0.06, 0.06, 0.08], n)
    _write(derived, "citation_existence", {**keys, "state": state,
           "reason": ["r"] * n, "drift_seconds": rng.random(n),
           "capture_time": [f"{DATE}T06:00:00+00:00"] * n,
           "final_uri": ["https://example.org/"] * n, "final_status": np.full(n, 200),
           "payload_sha256": ["ab" * 32] * n}, True)
    _write(derived, "passage_checks", {**keys, "status": _pick(
        rng, ["located", "shifted", "normalized", "absent", "unresolved"],
        [0.6, 0.1, 0.05, 0.15, 0.1], n)}, True)
    label = _pick(rng, ["fully_supported", "partially_supported", "unsupported", "contradicted",
                        "unresolved"], [0.6, 0.15, 0.12, 0.05, 0.08], n)
    _write(derived, "support_labels", {**keys, "label": label,
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
        "outcome": _pick(rng, ["consistent", "mismatch", "not_found", "unmatched",
                               "unresolvable"], [0.7, 0.1, 0.05, 0.05, 0.1], int(m.sum()))},
        True)
    r_o = _pick(rng, [1, 0, None], [0.1, 0.8, 0.1], n)
    _write(derived, "omission_endpoints", {
        "tuple_digest": np.char.add("tup", np.arange(n).astype(str)).astype(object),
        "answer_id": cit_answer, "source_url": ["https://e.org/"] * n,
        "source_role": ["affiliate"] * n, "r_o": pa.array(list(r_o), pa.int8()),
        "priority": rng.random(n), "policy_action": np.where(
            pa.array(list(r_o), pa.int8()).is_null(), "REVIEW", "PASS")}, True)
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--answers", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    derived = Path(__file__).resolve().parent / ".cache" / "metrics"
    shutil.rmtree(derived, ignore_errors=True)
    t0 = time.perf_counter()
    n = build(derived, args.answers)
    print(f"inputs: {args.answers:,} answers, {args.answers * 3:,} claims, {n:,} citations "
          f"({time.perf_counter() - t0:.1f} s to write)")
    best_m = best_r = float("inf")
    for _ in range(args.repeat):
        t = time.perf_counter()
        result = compute_partition(derived, DATE, VERSION)
        best_m = min(best_m, time.perf_counter() - t)
        parquet_io.write_partition(result.table, derived, "metrics",
                                   {"observation_date": DATE, "codebook": VERSION})
        t = time.perf_counter()
        page = render.build(derived, DATE, VERSION)
        best_r = min(best_r, time.perf_counter() - t)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"metrics: {result.table.num_rows:,} rows in {best_m:.2f} s (best of {args.repeat}); "
          f"report: {page.path.stat().st_size / 1024:,.0f} KiB in {best_r:.2f} s; "
          f"peak RSS {rss:,.0f} MiB")


if __name__ == "__main__":
    main()
