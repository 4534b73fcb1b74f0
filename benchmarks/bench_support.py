"""Benchmark the support stage on a large synthetic annotation set.

Run: ``.venv/bin/python benchmarks/bench_support.py [--items N]`` (``make bench``).

Writes, under a temporary folder, a claims and a citations parquet partition for one date
(N citations, one per claim), ``annotations/support/<date>.csv`` with 2-3 human judgments per
citation plus a grader row on 30% of them (seeded; about 2.9 N rows), an annotator registry and
two codebooks, then times each step of the stage as the assets run it:
classify (read CSV + every rejection rule + dating), judgments (split accepted/rejected),
labels (adjudication, atoms, queue), queue, agreement (alpha, kappa, confusion). Prints a
Markdown table for benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import csv
import platform
import random
import tempfile
import time
from pathlib import Path

import pyarrow as pa
from peak_rss import own_peak_mb  # noqa: E402

from citeaudit import codebook, parquet_io
from citeaudit.demo_corpus.codebooks import write_codebooks
from citeaudit.support import adjudication, agreement, judgments

DATE = "2026-11-01"
LABELS = ("supports", "partial", "no_support", "contradicts", "cannot_tell")
ANNOTATORS = [f"ann-{i:02d}" for i in range(1, 13)]


def build(raw: Path, derived: Path, items: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    claims = [f"clm-{i:08d}" for i in range(items)]
    answers = [f"ans-{i // 4:08d}" for i in range(items)]
    part = {"observation_date": DATE}
    parquet_io.write_partition(pa.table({"claim_id": claims, "answer_id": answers}),
                               derived, "claims", part)
    parquet_io.write_partition(pa.table({"claim_id": claims,
                                         "citation_id": [f"cit-{i:08d}" for i in range(items)],
                                         "answer_id": answers}), derived, "citations", part)
    domains = ("health", "news", "technology", "finance")
    parquet_io.write_partition(pa.table({
        "answer_id": sorted(set(answers)), "engine": ["e"] * len(set(answers)),
        "domain": [domains[i % 4] for i in range(len(set(answers)))]}), derived, "answers", part)
    write_codebooks(raw / "codebooks")
    (raw / "annotations" / "support").mkdir(parents=True)
    with open(raw / "annotations" / "annotators.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["annotator_id", "kind"])
        w.writerows([a, "human"] for a in ANNOTATORS)
        w.writerow(["judge", "grader"])
    rows = 0
    with open(raw / "annotations" / "support" / f"{DATE}.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(judgments.REQUIRED_COLUMNS)
        for i in range(items):
            gold = rng.choice(LABELS)
            for a in rng.sample(ANNOTATORS, 3 if rng.random() < 0.35 else 2):
                lab = gold if rng.random() < 0.85 else rng.choice(LABELS)
                w.writerow([claims[i], f"cit-{i:08d}", a, lab, "", "2026-11-02T10:00:00Z",
                            "v1", "human"])
                rows += 1
            if rng.random() < 0.3:
                w.writerow([claims[i], f"cit-{i:08d}", "judge", gold, "",
                            "2026-11-02T10:00:00Z", "v1", "judge"])
                rows += 1
    return rows


def timed(name: str, fn, results: list):
    t = time.perf_counter()
    out = fn()
    results.append((name, time.perf_counter() - t))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=100_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        raw, derived = Path(tmp) / "raw", Path(tmp) / "derived"
        rows = build(raw, derived, args.items)
        book = codebook.load_version(raw, "v1")
        answers = parquet_io.read_partition(derived, "answers", {"observation_date": DATE})
        res: list[tuple[str, float]] = []
        classified = timed("classify", lambda: judgments.classify(raw, derived, book), res)
        judged, rejected = timed("judgments", lambda: judgments.judgments(classified, DATE), res)
        labels = timed("labels", lambda: adjudication.labels(judged, answers, book), res)
        timed("queue", lambda: adjudication.review_queue(labels), res)
        timed("agreement", lambda: agreement.agreement(judged, labels), res)
    peak = own_peak_mb()
    total = sum(t for _, t in res)
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}; "
          f"{args.items:,} items, {rows:,} annotation rows, {rejected.num_rows} rejected, "
          f"peak RSS {peak:,.0f} MB")
    print("| step | seconds | rows/s |")
    print("|---|---:|---:|")
    for name, t in res + [("total", total)]:
        print(f"| {name} | {t:.2f} | {rows / t:,.0f} |")


if __name__ == "__main__":
    main()
