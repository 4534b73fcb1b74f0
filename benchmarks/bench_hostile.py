"""Benchmark the limits on hostile pages that are too slow or too big for the tests.

Run: ``.venv/bin/python benchmarks/bench_hostile.py [--pages 8] [--page-mb 12] [--raw-parse]``

1. **Deep HTML.** Time of ``html_to_text`` (nesting counted before the parse, cut past
   ``MAX_HTML_DEPTH``) on 100k and 1M nested ``<div>``s, beside the parser's own time on
   5k/20k/40k levels (it grows with the square of the depth; ``--raw-parse`` adds 100k, about
   40 s).
2. **Evidence memory.** Peak RSS of the evidence locator (page batches, spilled, sorted: what
   the ``support_evidence`` asset runs) over ``--pages`` cited pages of ``--page-mb`` MB of text
   each, once with the page cap (``MAX_PAGE_TEXT_CHARS``) and once without, each in its own
   child process so its peak RSS is its own, and once over pages just under the cap. The
   target: a page past the cap costs no more than a page at the cap.

Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, random, resource, sys, tempfile, time
from pathlib import Path
import pyarrow as pa
from citeaudit.codebook import validate
from citeaudit.support import evidence
pages, page_mb, capped = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3] == "capped"
if not capped:
    evidence.MAX_PAGE_TEXT_CHARS = 10**12
    evidence.BATCH_TEXT_CHARS = 10**12
rng = random.Random(7)
vocab = [f"term{i}" for i in range(20000)]
sentence = lambda: " ".join(rng.choice(vocab) for _ in range(12)) + ". "
block = "".join(sentence() for _ in range(2000))
texts, pairs, claims = [], [], []
for p in range(pages):
    text = block * max(1, int(page_mb * 1024 * 1024 / len(block)))
    texts.append({"payload_sha256": f"p{p:03d}", "text": text})
    for c in range(3):
        cid = f"c{p:03d}-{c}"
        claims.append({"claim_id": cid, "text": sentence()})
        pairs.append({"answer_id": f"a{p}", "claim_id": cid, "citation_id": cid + ":0",
                      "url": f"https://x.org/{p}", "capture_time": None,
                      "payload_sha256": f"p{p:03d}", "unavailable_reason": None,
                      "engine": "e", "domain": "d"})
schema = pa.schema([("answer_id", pa.string()), ("claim_id", pa.string()),
                    ("citation_id", pa.string()), ("url", pa.string()),
                    ("capture_time", pa.timestamp("us", tz="UTC")),
                    ("payload_sha256", pa.string()), ("unavailable_reason", pa.string()),
                    ("engine", pa.string()), ("domain", pa.string())])
pairs = pa.Table.from_pylist(pairs, schema=schema)
claims = pa.Table.from_pylist(claims)
texts = pa.Table.from_pylist(texts)
book = validate({"version": "b", "label_maps": {"s": {"x": "unresolved"}}, "source_roles": {},
                 "priority_weights": {"w": 1.0}, "policy": {"contextualize_above": 0.5}}, "b")
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t = time.perf_counter()
with tempfile.TemporaryDirectory() as work:
    rows = 0
    verdicts = {}
    for batch in evidence.sorted_evidence(evidence.locate_by_page(
            evidence.cap_pages(pairs, texts), claims, texts, book), Path(work)):
        rows += batch.num_rows
        for v in batch.column("verdict").to_pylist():
            verdicts[v] = verdicts.get(v, 0) + 1
print(json.dumps({"seconds": time.perf_counter() - t, "rows": rows, "verdicts": verdicts,
                  "inputs_rss_mb": before,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def deep_html(raw_parse: bool) -> list[tuple[str, str]]:
    """(case, seconds) of the deep-HTML cases."""
    from selectolax.lexbor import LexborHTMLParser

    from citeaudit.alignment import payload_text

    out = []
    for n in (5_000, 20_000, 40_000) + ((100_000,) if raw_parse else ()):
        html = "<div>" * n + "x" + "</div>" * n
        t = time.perf_counter()
        LexborHTMLParser(html)
        out.append((f"parser alone, {n:,} nested divs", f"{time.perf_counter() - t:.2f}"))
    for n in (100_000, 1_000_000):
        html = "<html><body>" + "<div>" * n + "x" + "</div>" * n + "</body></html>"
        t = time.perf_counter()
        try:
            payload_text.html_to_text(html)
            outcome = "parsed"
        except payload_text.PageTooComplex as exc:
            outcome = exc.reason
        out.append((f"html_to_text, {n:,} nested divs ({outcome})",
                    f"{time.perf_counter() - t:.2f}"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=8)
    ap.add_argument("--page-mb", type=float, default=12.0)
    ap.add_argument("--raw-parse", action="store_true",
                    help="also time the parser alone on 100k levels (about 40 s)")
    args = ap.parse_args()
    print("| case | seconds |\n|---|---|")
    for case, secs in deep_html(args.raw_parse):
        print(f"| {case} | {secs} |")
    print(f"\n{args.pages} cited pages of {args.page_mb:g} MB of text each, 3 claims a page\n")
    print("| evidence step | seconds | peak RSS (MB) | inputs RSS (MB) | verdicts |")
    print("|---|---|---|---|---|")
    at_cap = 1.9  # MB: pages just under MAX_PAGE_TEXT_CHARS, scored in full
    for label, mode, mb in ((f"capped, {args.page_mb:g} MB pages", "capped", args.page_mb),
                            (f"uncapped, {args.page_mb:g} MB pages", "uncapped", args.page_mb),
                            (f"pages of {at_cap:g} MB (under the cap)", "capped", at_cap)):
        done = subprocess.run([sys.executable, "-c", CHILD, str(args.pages), str(mb), mode],
                              capture_output=True, text=True, cwd=ROOT)
        if done.returncode != 0:
            print(f"| {label} | failed | | | {done.stderr.strip().splitlines()[-1][:80]} |")
            continue
        r = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"| {label} | {r['seconds']:.1f} | {r['peak_rss_mb']:.0f} | "
              f"{r['inputs_rss_mb']:.0f} | {r['verdicts']} |")


if __name__ == "__main__":
    main()
