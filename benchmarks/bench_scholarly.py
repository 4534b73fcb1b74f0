"""Benchmark the L3 metadata check: the comparison hot path, and requests under the rate limit.

Run: ``.venv/bin/python benchmarks/bench_scholarly.py`` (``make bench``). Options:
``--citations N`` (default 50,000), ``--works N`` (distinct registered works, default 500),
``--crossref-rate R`` / ``--crossref-list-rate R`` / ``--openalex-rate R`` /
``--openalex-list-rate R`` (requests per second for single records and for lists; default: the
resources' defaults, the registries' documented polite rates: Crossref 10 and 3, OpenAlex 10
and 10).

a. *Cold check*: ``check_citations`` with an empty cache, as ``check_metadata`` runs on a new
   day: every distinct DOI of the citations (the works and the fabricated ones) is looked up in
   Crossref and OpenAlex (real crossrefapi and pyalex clients, loopback registry holding the
   works) through the RecordStore, in lists (Crossref ``filter=doi:a,doi:b``, 50 per request;
   OpenAlex ``filter=doi:a|b``, 100 per request; a DOI a list leaves out, e.g. a fabricated
   one, gets its own request), the two registries in two threads at their rates. Reports HTTP
   requests (lists and single records per registry), lookups, wall seconds, the floor the
   rates set (per registry: singles / single rate, lists / list rate, side by side) and what
   the one-by-one path would need at the same rate (computed from the limiter's spacing).
   The loopback registry logs when each request arrived: the bench prints, per registry and
   kind of request, when the first and the last one came and how long the single-record
   checks stood idle while some were still due (gaps beyond the limiter's spacing).
b. *Check*: ``--citations`` citations (each citing one of the works: 60 % exact, 15 % wrong year,
   10 % wrong first author, 5 % other title, 10 % fabricated DOIs) checked from the warm cache
   (no request): SQL selection, DOI extraction, one comparison per distinct (DOI, cited fields),
   the join back. Reports citations/s and verifies the planted mismatch counts.

``--raw DIR`` instead measures ``check_metadata``'s work cold on a generated day (``citeaudit
demo-corpus --out DIR --answers 20000 --days 1``): the day's citations are ingested (not
timed), then checked against the day's own loopback registry (``DIR/registry``) at the
resources' rates with an empty cache, as the step runs; it prints wall, CPU, the requests per
endpoint (single records, DOI lists, searches) and the floor the rates set.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from itertools import pairwise
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from peak_rss import own_peak_mb  # noqa: E402

from citeaudit.demo_corpus.registry import crossref_body, openalex_body  # noqa: E402
from citeaudit.scholarly import check, compare  # noqa: E402
from citeaudit.scholarly.cache import RecordStore  # noqa: E402
from citeaudit.scholarly.mirror import RegistryMirror  # noqa: E402
from citeaudit.scholarly.transport import is_list_request  # noqa: E402
from pipelines.resources import CrossrefResource, OpenAlexResource  # noqa: E402

WORDS = ("adaptive", "bayesian", "cohort", "dynamics", "estimation", "filters", "genomic",
         "hierarchical", "inference", "kinetics", "longitudinal", "models", "networks",
         "oncology", "protein", "quantile", "robust", "sampling", "tissue", "variance")
SURNAMES = ("Okafor", "Lindqvist", "Haddad", "Nakamura", "Kowalski", "Moreau", "Silva",
            "Chen", "Novak", "Adeyemi", "Fischer", "Rossi")


def make_works(n: int, rng: random.Random) -> list[dict]:
    works = []
    for i in range(n):
        title = " ".join(rng.sample(WORDS, 6)).capitalize() + f" study {i}"
        works.append({"DOI": f"10.5072/bench.{i}", "type": "journal-article", "title": [title],
                      "container-title": [f"Journal of {rng.choice(WORDS).title()}"],
                      "issued": {"date-parts": [[2000 + i % 25]]},
                      "author": [{"given": "A.", "family": rng.choice(SURNAMES),
                                  "sequence": "first"}]})
    return works


def write_registry(root: Path, works: list[dict]) -> None:
    for reg in ("crossref", "openalex"):
        (root / reg / "works").mkdir(parents=True, exist_ok=True)
    for k, w in enumerate(works):
        name = w["DOI"].replace("/", "_") + ".json"
        (root / "crossref" / "works" / name).write_text(json.dumps(crossref_body(w)))
        (root / "openalex" / "works" / name).write_text(json.dumps(openalex_body(w, 10**9 + k)))


def citations_table(works: list[dict], n: int, rng: random.Random) -> tuple[pa.Table, dict]:
    rows, planted = [], {"year": 0, "first_author": 0, "title": 0, "not_found": 0}
    for i in range(n):
        w = rng.choice(works)
        title, year = w["title"][0], w["issued"]["date-parts"][0][0]
        author, venue, doi = f"A. {w['author'][0]['family']}", w["container-title"][0], w["DOI"]
        r = rng.random()
        if r < 0.15:
            year += 3
            planted["year"] += 1
        elif r < 0.25:
            author = "B. Zzyzx"
            planted["first_author"] += 1
        elif r < 0.30:
            title = "Entirely different words about something else"
            planted["title"] += 1
        elif r < 0.40:
            doi = f"10.5555/fabricated.{rng.randrange(max(1, len(works) // 3))}"
            planted["not_found"] += 1
        rows.append({"answer_id": f"a{i // 4}", "claim_id": f"c{i // 2}", "citation_id": f"x{i}",
                     "claim_index": 0, "citation_index": i % 2, "url": None, "doi": doi,
                     "title": title, "authors": [author], "year": year, "venue": venue,
                     "source_type": "scholarly"})
    return pa.Table.from_pylist(rows), planted


def endpoint(path: str) -> tuple[str, str]:
    """(registry, kind) of a loopback request path: kind 'single', 'list' (DOIs) or 'search'."""
    reg = path.split("/", 2)[1]
    if not is_list_request(path.split("?", 1)[0]):
        return reg, "single"
    query = parse_qs(urlsplit(path).query)
    return reg, "list" if RegistryMirror._doi_filter(reg, query) is not None else "search"


def timeline(log: list[tuple[float, str]], t0: float, rates: dict[str, float]) -> list[str]:
    """Per registry and kind: requests, first and last arrival (s after ``t0``), and for the
    single-record checks the idle time in their stream (gaps beyond the limiter's spacing)."""
    by: dict[tuple[str, str], list[float]] = {}
    for at, path in log:
        by.setdefault(endpoint(path), []).append(at - t0)
    lines = []
    for (reg, kind), times in sorted(by.items()):
        times.sort()
        line = (f"{reg} {kind}: {len(times):,} requests, first at {times[0]:.2f} s, "
                f"last at {times[-1]:.2f} s")
        if kind == "single" and rates.get(reg):
            spacing = 1.0 / rates[reg]
            idle = sum(max(0.0, b - a - spacing) for a, b in pairwise(times))
            line += f", idle between them {idle:.2f} s"
        lines.append(line)
    return lines


def kinds_of(paths: list[str]) -> Counter:
    return Counter(endpoint(p) for p in paths)


def floor_of(kinds: Counter, rates: dict, list_rates: dict) -> float:
    """The least wall time the rates allow: per registry, single records beside lists and
    searches (which share the list limiter); the registries side by side."""
    return max(max(kinds[(r, "single")] / rates[r],
                   (kinds[(r, "list")] + kinds[(r, "search")]) / list_rates[r])
               for r in rates)


def day_main(args, defaults: dict) -> None:
    """``--raw``: ``check_metadata``'s lookups cold on a generated day (see module doc)."""
    from citeaudit import codebook
    from citeaudit.ingest import answers

    raw = Path(args.raw)
    dates = sorted(p.name for p in (raw / "answers").iterdir() if p.is_dir())
    t0 = time.perf_counter()
    citations = pa.concat_tables([answers.ingest_files(answers.answer_files(raw, d), raw)
                                  .citations for d in dates])
    print(f"| ingest (not part of the check): {citations.num_rows:,} citations of "
          f"{len(dates)} day(s) | {time.perf_counter() - t0:.1f} s | |")
    book = codebook.load_version(raw, args.codebook)
    rates = {r: defaults[r].requests_per_second for r in defaults}
    list_rates = {r: defaults[r].list_requests_per_second for r in defaults}
    with RegistryMirror.from_raw(raw / "registry") as mirror:
        clients = {r: defaults[r].client(mirror.crossref_url if r == "crossref"
                                         else mirror.openalex_url) for r in defaults}
        store = RecordStore({}, clients, book.scholarly.refresh_days)
        t0, cpu0, m0 = time.perf_counter(), time.process_time(), time.monotonic()
        out = check.check_citations(citations, store,
                                    compare.Thresholds.from_codebook(book.scholarly))
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        log = list(mirror.log)
    kinds = kinds_of([p for _, p in log])
    print(f"| cold check_metadata lookups: {out.num_rows:,} checked citations, "
          f"{store.counts['requests']:,} requests for {store.counts['lookups_fetched']:,} "
          f"lookups | {wall:.1f} s wall, {cpu:.1f} s CPU | floor "
          f"{floor_of(kinds, rates, list_rates):.1f} s |")
    for r in rates:
        print(f"| {r}: {kinds[(r, 'list')]:,} DOI lists and {kinds[(r, 'search')]:,} searches "
              f"at {list_rates[r]:g}/s, {kinds[(r, 'single')]:,} single-record requests at "
              f"{rates[r]:g}/s | | |")
    for line in timeline(log, m0, rates):
        print(f"| {line} | | |")
    outcomes = Counter(out.column("verdict").to_pylist())
    print(f"| outcomes | {dict(sorted(outcomes.items()))} | |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--citations", type=int, default=50_000)
    ap.add_argument("--works", type=int, default=500)
    defaults = {"crossref": CrossrefResource().registry_settings(),
                "openalex": OpenAlexResource().registry_settings()}
    for reg in ("crossref", "openalex"):
        ap.add_argument(f"--{reg}-rate", type=float, default=defaults[reg].requests_per_second)
        ap.add_argument(f"--{reg}-list-rate", type=float,
                        default=defaults[reg].list_requests_per_second)
    ap.add_argument("--raw", help="a generated day's raw folder: measure check_metadata's "
                    "lookups cold on it instead (see module doc)")
    ap.add_argument("--codebook", default="v1", help="codebook version for --raw")
    args = ap.parse_args()
    if args.raw:
        return day_main(args, defaults)
    rng = random.Random(7)
    works = make_works(args.works, rng)
    table, planted = citations_table(works, args.citations, rng)
    dois = sorted(set(table.column("doi").to_pylist()))
    rates = {"crossref": args.crossref_rate, "openalex": args.openalex_rate}
    list_rates = {"crossref": args.crossref_list_rate, "openalex": args.openalex_list_rate}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "registry"
        write_registry(root, works)
        with RegistryMirror.from_raw(root) as mirror:
            clients = {
                reg: replace(defaults[reg], requests_per_second=rates[reg],
                             list_requests_per_second=list_rates[reg]).client(
                    mirror.crossref_url if reg == "crossref" else mirror.openalex_url)
                for reg in ("crossref", "openalex")}
            store = RecordStore({}, clients, refresh_days=30)
            t0 = time.perf_counter()
            cpu0 = time.process_time()
            m0 = time.monotonic()
            cold_out = check.check_citations(table, store, compare.Thresholds())
            wire = time.perf_counter() - t0
            wire_cpu = time.process_time() - cpu0
            log = list(mirror.log)
            kinds = kinds_of([p for _, p in log])
        requests = store.counts["requests"]
        offline = RecordStore(dict(store.used), {}, refresh_days=30)
        t0 = time.perf_counter()
        out = check.check_citations(table, offline, compare.Thresholds())
        checked = time.perf_counter() - t0
    got = {f: sum(1 for m in out.column("mismatch_fields").to_pylist() if m == f)
           for f in ("year", "first_author")}
    outcomes = out.column("verdict").to_pylist()
    assert got["year"] == planted["year"] and got["first_author"] == planted["first_author"]
    assert outcomes.count("not_found") == planted["not_found"], "fabricated DOIs must be 404s"
    assert cold_out.equals(out), "the cold and the warm check must give the same verdicts"
    lookups = store.counts["lookups_fetched"]
    one_by_one = max(len(dois) / r for r in rates.values())
    print(f"| cold check: {requests:,} HTTP requests for {lookups:,} lookups ({len(dois):,} "
          f"DOIs x 2 registries; {store.counts['batch_unanswered']:,} asked again on their "
          f"own) | {wire:.1f} s wall, {wire_cpu:.1f} s CPU | one by one at "
          f"{args.crossref_rate:g}/s and {args.openalex_rate:g}/s: ≥ {one_by_one:.0f} s |")
    floor = floor_of(kinds, rates, list_rates)
    for r in rates:
        print(f"| {r}: {kinds[(r, 'list')]:,} list requests at {list_rates[r]:g}/s, "
              f"{kinds[(r, 'single')]:,} single-record requests at {rates[r]:g}/s | | |")
    print(f"| floor set by the rates (per registry, lists beside singles) | {floor:.1f} s | |")
    for line in timeline(log, m0, rates):
        print(f"| {line} | | |")
    print(f"| check: {out.num_rows:,} citations, {offline.counts['from_cache']:,} cache hits, "
          f"0 requests | {checked:.2f} s | {out.num_rows / checked:,.0f} citations/s |")
    peak = own_peak_mb()
    print(f"| peak RSS of the process | {peak:.0f} MB | |")


if __name__ == "__main__":
    main()
