"""Benchmark: temporal alignment of N citations against 5·N generated captures.

Generates captures (CAPTURE_SCHEMA parquet: 2% redirects, 5% revisits, 2% 404s, spread over
20 days) and citations over the same keys in DuckDB, then times :func:`align.align`
(ASOF hops, redirects, revisits, later-change check) and :func:`align.existence`. Citation
URLs are plain (no tracking parameters) and capture keys come precomputed as the index writes
them; SURT keying of the distinct citation URLs is timed separately on a sample, since it is
per-URL Python work that the index and ingestion already pay once per URL.

Usage: ``python benchmarks/bench_alignment.py [--citations 1000000] [--captures 5000000]``.
Peak RSS is the process's own high-water mark since it started (``peak_rss.own_peak_mb``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from peak_rss import own_peak_mb  # noqa: E402

from citeaudit import duck  # noqa: E402
from citeaudit.alignment import align
from citeaudit.alignment.canonical import canonical_table  # noqa: E402
from citeaudit.codebook import (  # noqa: E402
    AlignmentWindow,
    Codebook,
    Policy,
    ReviewSampling,
    Scholarly,
)

GEN_CAPTURES = """
COPY (
  SELECT
    'crawl-' || (i % 50)::VARCHAR || '.warc.gz' AS file,
    i * 1000 AS "offset", 1000::BIGINT AS length,
    CASE WHEN i % 20 = 7 THEN 'revisit' ELSE 'response' END AS record_type,
    'https://site' || (k % 997)::VARCHAR || '.example/page/' || k::VARCHAR AS target_uri,
    'example,site' || (k % 997)::VARCHAR || ')/page/' || k::VARCHAR AS urlkey,
    TIMESTAMPTZ '2026-11-01 00:00:00+00' + to_seconds((hash(i) % (20 * 86400))::BIGINT)
        AS capture_time,
    NULL::VARCHAR AS timestamp,
    (CASE WHEN i % 50 = 3 THEN 301 WHEN i % 50 = 5 THEN 404 ELSE 200 END)::INTEGER
        AS http_status,
    CASE WHEN i % 50 = 3 THEN 'https://site' || ((k + 1) % 997)::VARCHAR
        || '.example/page/' || (k + 1)::VARCHAR END AS redirect_location,
    'text/html' AS mime,
    'sha1:' || (hash(k, i % 3) % 1000000)::VARCHAR AS declared_payload_digest,
    true AS digest_verified,
    CASE WHEN i % 20 = 7 THEN NULL ELSE md5(i::VARCHAR) END AS payload_sha256,
    1000::BIGINT AS payload_length,
    'sha1:' || (hash(k, i % 3) % 1000000)::VARCHAR AS cdx_digest,
    CASE WHEN i % 20 = 7 THEN 'https://site' || (k % 997)::VARCHAR || '.example/page/'
        || k::VARCHAR END AS refers_to_uri,
    NULL::VARCHAR AS refers_to_date,
    NULL::VARCHAR AS record_id, NULL::VARCHAR AS warc_date_raw,
    false AS truncated, NULL::VARCHAR AS error
  FROM (SELECT i, (hash(i * 7919) % $n_keys)::BIGINT AS k FROM range($n_caps) t(i))
) TO '{path}' (FORMAT parquet)
"""

GEN_CITATIONS = """
SELECT
    'a' || (i // 5)::VARCHAR AS answer_id, 'c' || (i // 2)::VARCHAR AS claim_id,
    'x' || i::VARCHAR AS citation_id,
    'https://site' || (k % 997)::VARCHAR || '.example/page/' || k::VARCHAR AS url,
    TIMESTAMPTZ '2026-11-08 00:00:00+00' + to_seconds((hash(i, 1) % (6 * 86400))::BIGINT)
        AS retrieved_at
FROM (SELECT i, (hash(i * 104729) % $n_keys)::BIGINT AS k FROM range($n_cit) t(i))
"""


MEMORY_LIMIT = "900MB"  # DuckDB's own budget; it spills to temp_directory beyond it


def _book() -> Codebook:
    return Codebook("bench", "", {}, {}, {}, Policy(0.5), (), AlignmentWindow(7, 1),
                    ("utm_*", "fbclid", "gclid"), ReviewSampling(), Scholarly(), {})


def _rss_mb() -> float:
    return own_peak_mb()


def generate(folder: str, n_cit: int, n_caps: int) -> None:
    """Write captures.parquet, citations.parquet, answers.parquet and canon.parquet.

    Runs in a child process so the parent's peak RSS measures the alignment alone.
    """
    con = duck.connect()
    n_keys = max(1, n_caps // 5)
    con.execute(GEN_CAPTURES.replace("{path}", f"{folder}/captures.parquet"),
                {"n_caps": n_caps, "n_keys": n_keys})
    con.sql(GEN_CITATIONS, params={"n_cit": n_cit, "n_keys": n_keys}).to_table("citations")
    con.execute(f"COPY citations TO '{folder}/citations.parquet' (FORMAT parquet)")
    con.execute(f"COPY (SELECT answer_id, min(retrieved_at) AS observed_at FROM citations "
                f"GROUP BY answer_id) TO '{folder}/answers.parquet' (FORMAT parquet)")
    # keys as ingestion + canonicalization give them (SURT keying is timed separately)
    con.execute(
        "COPY (SELECT DISTINCT url, url AS canonical_url, 'example,' || "
        "regexp_replace(url, '^https://(site[0-9]+)\\.example(/.*)$', '\\1)\\2') "
        "AS canonical_key, NULL::VARCHAR AS url_error FROM citations) "
        f"TO '{folder}/canon.parquet' (FORMAT parquet)")


def run(n_cit: int, n_caps: int) -> dict:
    import multiprocessing as mp

    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        child = mp.get_context("spawn").Process(target=generate, args=(tmp, n_cit, n_caps))
        child.start()
        child.join()
        if child.exitcode != 0:
            raise RuntimeError(f"generator failed with exit code {child.exitcode}")
        gen = time.perf_counter() - t0
        citations = pq.read_table(f"{tmp}/citations.parquet")
        answers = pq.read_table(f"{tmp}/answers.parquet")
        canon = pq.read_table(f"{tmp}/canon.parquet")
        book = _book()
        sample = citations.column("url").to_pylist()[: min(n_cit, 20000)]
        t1 = time.perf_counter()
        canonical_table(sample, book.is_tracking_param, strict=True)
        key_us = (time.perf_counter() - t1) / max(1, len(sample)) * 1e6
        del sample
        t2 = time.perf_counter()
        work = duck.connect(Path(tmp) / "work.duckdb")  # tables can be evicted to disk
        work.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
        work.execute(f"SET temp_directory = '{tmp}/spill'")
        work.execute("SET preserve_insertion_order = false")  # every output is ORDER BY'd
        work.execute("SET enable_progress_bar = false")
        aligned = align.align(citations, answers, Path(tmp), book, con=work,
                                  capture_paths=[f"{tmp}/captures.parquet"], canon=canon)
        existence = align.existence(aligned)
        took = time.perf_counter() - t2
        c2 = duck.connect()
        c2.register("existence", existence)
        states = c2.sql(
            "SELECT verdict, count(*) AS n FROM existence GROUP BY verdict ORDER BY verdict"
        ).fetchall()
        work.close()
        return {"citations": n_cit, "captures": n_caps, "generate_s": round(gen, 1),
                "align_s": round(took, 1), "surt_us_per_url": round(key_us, 1),
                "peak_rss_mb": round(_rss_mb()), "states": dict(states)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--citations", type=int, nargs="*", default=[100_000, 1_000_000])
    parser.add_argument("--ratio", type=int, default=5, help="captures per citation")
    args = parser.parse_args()
    for n in args.citations:
        print(run(n, n * args.ratio), flush=True)


if __name__ == "__main__":
    main()
