"""The registry cache (asset ``scholarly_records``): what each registry answered, and when.

Layout: ``scholarly_records/observation_date=D/codebook=V/data.parquet``: each judged partition
writes the records its citations used (fetched in this run or reused). The cache is the union
of every partition on disk: per (registry, kind, lookup_key) the newest *answered* record
(found / not_found) wins over an error, so a run with the registries unreachable still checks
from what an earlier run fetched. ``kind`` is 'work' (lookup_key = the DOI) or 'search'
(lookup_key = the query text).

A record is fetched again only when it is older than the codebook's ``refresh_days``, or when
the cached answer was an error; if that refresh fails, the older answer is kept and used.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol

import pyarrow as pa

from citeaudit import duck, parquet_io
from citeaudit.scholarly.clients import Fetch

ASSET = "scholarly_records"
ANSWERED = ("found", "not_found")
SCHEMA = pa.schema([
    ("registry", pa.string()),
    ("kind", pa.string()),
    ("lookup_key", pa.string()),
    ("doi", pa.string()),
    ("fetched_at", pa.timestamp("us", tz="UTC")),
    ("http_status", pa.int32()),
    ("outcome", pa.string()),
    ("detail", pa.string()),
    ("raw_json", pa.string()),
])


class Client(Protocol):
    registry: str

    def work(self, doi: str) -> Fetch: ...

    def search(self, text: str) -> Fetch: ...


@dataclass(frozen=True)
class Cached:
    """A cache row: the registry's answer and when it was fetched."""

    fetch: Fetch
    fetched_at: datetime


def read_cache(derived: Path) -> dict[tuple[str, str, str], Cached]:
    """Every record on disk, reduced to the one to use per key (see module doc)."""
    glob = parquet_io.dataset_glob(derived, ASSET, 2)
    if not list(Path(derived, ASSET).glob("*/*/" + parquet_io.DATA_FILE)):
        return {}
    con = duck.connect()
    rows = duck.query(con, "scholarly/select_cached_records", {"glob": glob}).to_pylist()
    return {
        (r["registry"], r["kind"], r["lookup_key"]): Cached(
            Fetch(r["registry"], r["kind"], r["lookup_key"], r["http_status"], r["outcome"],
                  r["raw_json"], r["detail"] or ""),
            r["fetched_at"])
        for r in rows
    }


@dataclass
class RecordStore:
    """Answers lookups from the cache or, when needed, from the registries; remembers every
    record used (written back as this partition's ``scholarly_records``) and counts requests.

    ``clients`` maps registry → client; a registry without a client is offline (cache only).
    """

    cache: dict[tuple[str, str, str], Cached]
    clients: dict[str, Client]
    refresh_days: int
    now: datetime = field(default_factory=lambda: datetime.now(UTC))
    used: dict[tuple[str, str, str], Cached] = field(default_factory=dict)
    counts: Counter = field(default_factory=Counter)

    def get(self, registry: str, kind: str, key: str) -> Fetch:
        ident = (registry, kind, key)
        if ident in self.used:
            return self.used[ident].fetch
        cached = self.cache.get(ident)
        fresh = (cached is not None and cached.fetch.outcome in ANSWERED
                 and self.now - cached.fetched_at <= timedelta(days=self.refresh_days))
        if fresh:
            self.counts["from_cache"] += 1
            chosen = cached
        elif registry not in self.clients:
            self.counts["offline"] += 1
            chosen = cached or Cached(
                Fetch(registry, kind, key, None, "error", None, "offline_no_cached_record"),
                self.now)
        else:
            client = self.clients[registry]
            fetch = client.work(key) if kind == "work" else client.search(key)
            self.counts["requests"] += 1
            self.counts[f"requests_{registry}"] += 1
            chosen = Cached(fetch, self.now)
            if fetch.outcome not in ANSWERED and cached is not None and \
                    cached.fetch.outcome in ANSWERED:
                self.counts["stale_used_after_error"] += 1
                chosen = cached  # the registry failed now; an older answer is still an answer
        self.used[ident] = chosen
        return chosen.fetch

    def table(self) -> pa.Table:
        """The records used, one row per key, in key order."""
        rows = []
        for (registry, kind, key), c in sorted(self.used.items()):
            rows.append({
                "registry": registry, "kind": kind, "lookup_key": key,
                "doi": key if kind == "work" else None, "fetched_at": c.fetched_at,
                "http_status": c.fetch.http_status, "outcome": c.fetch.outcome,
                "detail": c.fetch.detail or None, "raw_json": c.fetch.raw_json,
            })
        return pa.Table.from_pylist(rows, schema=SCHEMA)
