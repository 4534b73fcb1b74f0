"""Benchmark two consecutive nights of the L3 metadata check: the second asks only for what is new.

Run: ``.venv/bin/python benchmarks/bench_nights.py`` (``make bench``). Options: ``--keys N``
(distinct lookups a night cites, default 400: 70 % DOIs of registered works, 15 % fabricated
DOIs that need their own 404 check, 15 % title-only citations that need a search),
``--repeat F`` (share of night one's citations night two cites again, default 0.8).

Each night runs as the ``check_metadata`` asset does: the registry cache read from the derived
folder (every ``scholarly_records`` partition on disk), ``check_citations`` through the
:class:`~citeaudit.scholarly.cache.RecordStore` with ages counted to the end of the observed
day, the records written back as the night's partition; real crossrefapi and pyalex clients
against a loopback registry at the registries' documented polite rates (the resources'
defaults: Crossref 10 single records and 3 lists or searches a second, OpenAlex 10 and 10).
Printed per night: the wall time of the lookups (the registry wait), requests, lookups fetched
and served from the cache, and the floor the rates set; then night two's wall and requests as
a share of night one's, beside the share of its lookups that were new. Finally night two is
run again on a copy of the folder without night one's partition (no memory): the wait it saves.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_scholarly import floor_of, kinds_of, make_works, write_registry  # noqa: E402
from peak_rss import own_peak_mb  # noqa: E402

from citeaudit import parquet_io  # noqa: E402
from citeaudit.scholarly import cache, check, compare  # noqa: E402
from citeaudit.scholarly.mirror import RegistryMirror  # noqa: E402
from pipelines.resources import CrossrefResource, OpenAlexResource  # noqa: E402

DATES = ("2026-11-01", "2026-11-02")


def keys_for(works: list[dict], n: int, start: int, rng: random.Random) -> list[dict]:
    """``n`` distinct cited works: registered DOIs, fabricated DOIs and title-only citations
    (each a new lookup; ``start`` keeps the nights' new keys apart)."""
    out = []
    for i in range(start, start + n):
        w = works[i % len(works)]
        row = {"doi": w["DOI"], "title": w["title"][0],
               "authors": [f"A. {w['author'][0]['family']}"],
               "year": w["issued"]["date-parts"][0][0], "venue": w["container-title"][0]}
        r = rng.random()
        if r < 0.15:
            row["doi"] = f"10.5555/fabricated.{i}"
        elif r < 0.30:
            row["doi"] = None
            row["title"] = f"{row['title']} revisited {i}"  # a distinct search text
        out.append(row)
    return out


def citations(keys: list[dict]) -> pa.Table:
    rows = [{"answer_id": f"a{i:06d}", "claim_id": f"a{i:06d}-c0",
             "citation_id": f"a{i:06d}-c0-0", "claim_index": 0, "citation_index": 0,
             "url": None, "source_type": "scholarly", **k} for i, k in enumerate(keys)]
    return pa.Table.from_pylist(rows)


def night(mirror: RegistryMirror, derived: Path, date: str, table: pa.Table, clock: datetime,
          defaults: dict) -> dict:
    clients = {r: defaults[r].client(mirror.crossref_url if r == "crossref"
                                     else mirror.openalex_url) for r in defaults}
    store = cache.RecordStore(cache.read_cache(derived), clients, refresh_days=30, now=clock,
                              as_of=cache.end_of_day(date))
    seen = len(mirror.log)
    t0, cpu0 = time.perf_counter(), time.process_time()
    out = check.check_citations(table, store, compare.Thresholds())
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    parquet_io.write_partition(store.table(), derived, cache.ASSET,
                               {"observation_date": date, "codebook": "v1"})
    kinds = kinds_of([p for _, p in list(mirror.log)[seen:]])
    rates = {r: defaults[r].requests_per_second for r in defaults}
    list_rates = {r: defaults[r].list_requests_per_second for r in defaults}
    return {"wall": wall, "cpu": cpu, "requests": store.counts["requests"],
            "fetched": store.counts["lookups_fetched"], "cached": store.counts["from_cache"],
            "floor": floor_of(kinds, rates, list_rates), "rows": out.num_rows,
            "verdicts": out.column("verdict").to_pylist()}


def row(name: str, r: dict) -> str:
    return (f"| {name} | {r['rows']:,} citations: {r['fetched']:,} lookups fetched, "
            f"{r['cached']:,} from the cache, {r['requests']:,} requests | {r['wall']:.1f} s wall "
            f"({r['cpu']:.1f} s CPU) | floor {r['floor']:.1f} s |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--keys", type=int, default=400)
    ap.add_argument("--repeat", type=float, default=0.8)
    args = ap.parse_args()
    rng = random.Random(11)
    works = make_works(2 * args.keys, rng)
    first = keys_for(works, args.keys, 0, rng)
    kept = rng.sample(first, round(args.repeat * args.keys))
    second = kept + keys_for(works, args.keys - len(kept), args.keys, rng)
    rng.shuffle(second)
    defaults = {"crossref": CrossrefResource().registry_settings(),
                "openalex": OpenAlexResource().registry_settings()}
    clock = datetime(2026, 11, 2, 2, tzinfo=UTC)
    with tempfile.TemporaryDirectory() as tmp:
        root, derived = Path(tmp) / "registry", Path(tmp) / "derived"
        write_registry(root, works)
        with RegistryMirror.from_raw(root) as mirror:
            one = night(mirror, derived, DATES[0], citations(first), clock, defaults)
            cold_dir = Path(tmp) / "cold"
            shutil.copytree(derived, cold_dir)
            shutil.rmtree(cold_dir / cache.ASSET)  # the same night two, nothing remembered
            two = night(mirror, derived, DATES[1], citations(second),
                        clock + timedelta(days=1), defaults)
            cold = night(mirror, cold_dir, DATES[1], citations(second),
                         clock + timedelta(days=1), defaults)
    assert two["verdicts"] == cold["verdicts"], "the remembered answers must decide the same"
    print("| night | lookups | registry wait | floor of the rates |")
    print("|---|---|---:|---:|")
    print(row("one (nothing cached)", one))
    print(row(f"two ({args.repeat:.0%} of night one's citations again)", two))
    print(row("two, no memory (night one's records removed)", cold))
    new = two["fetched"] / max(1, two["fetched"] + two["cached"])
    print(f"| night two / night one | {new:.0%} of its lookups new | wall "
          f"{two['wall'] / one['wall']:.0%}, requests {two['requests'] / one['requests']:.0%} "
          f"| floor {two['floor'] / max(one['floor'], 1e-9):.0%} |")
    print(f"| night two with / without memory | | wall {two['wall'] / cold['wall']:.0%} | |")
    print(f"| peak RSS of the process | {own_peak_mb():.0f} MB | | |")


if __name__ == "__main__":
    main()
