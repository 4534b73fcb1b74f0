"""The registry cache (asset ``scholarly_records``): what each registry answered, and when.

Layout: ``scholarly_records/observation_date=D/codebook=V/data.parquet``: each judged partition
writes the records its citations used (fetched in this run or reused). The cache is the union
of every partition on disk: per (registry, kind, lookup_key) the newest *answered* record
(found / not_found) wins over an error, so a run with the registries unreachable still checks
from what an earlier run fetched. ``kind`` is 'work' (lookup_key = the DOI) or 'search'
(lookup_key = the query text).

A record is fetched again only when it is older than the codebook's ``refresh_days``, or when
the cached answer was an error; if that refresh fails, the older answer is kept and used.

DOI lookups that need fetching go to a registry in lists (:meth:`RecordStore.prefetch`, up to
the client's ``batch_limit`` DOIs per request, under the same rate limit and retries); a DOI
the list answer leaves out gets its own ``/works/{doi}`` request, the only answer that may say
"not found". ``fetched_at`` is per record: when its answer arrived.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import Counter, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol

import pyarrow as pa

from citeaudit import duck, parquet_io, storage
from citeaudit.scholarly.clients import Batch, Fetch
from citeaudit.scholarly.transport import RegistrySession

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
    batch_limit: int
    session: RegistrySession

    def work(self, doi: str) -> Fetch: ...

    def work_list(self, dois: Sequence[str]) -> Batch: ...

    def batchable(self, doi: str) -> bool: ...

    def search(self, text: str) -> Fetch: ...


@dataclass(frozen=True)
class Cached:
    """A cache row: the registry's answer and when it was fetched."""

    fetch: Fetch
    fetched_at: datetime


def read_cache(derived: Path) -> dict[tuple[str, str, str], Cached]:
    """Every record on disk, reduced to the one to use per key (see module doc)."""
    glob = parquet_io.dataset_glob(derived, ASSET, 2)
    if not list((storage.path(derived) / ASSET).glob("*/*/" + parquet_io.DATA_FILE)):
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
    ``batched=False`` sends every DOI lookup on its own (the reference path). ``counts``:
    ``requests`` (HTTP requests, per registry too), ``lookups_fetched`` (records settled by a
    request), ``from_cache``, ``offline``, ``stale_used_after_error``, ``batch_unanswered``.
    Safe to use from several threads (per registry: DOI lookups and searches side by side);
    ``arrivals`` names each key the moment its record is settled, once.
    """

    cache: dict[tuple[str, str, str], Cached]
    clients: dict[str, Client]
    refresh_days: int
    now: datetime = field(default_factory=lambda: datetime.now(UTC))
    batched: bool = True
    used: dict[tuple[str, str, str], Cached] = field(default_factory=dict)
    counts: Counter = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self.arrivals: queue.SimpleQueue[tuple[str, str, str]] = queue.SimpleQueue()

    def _use(self, ident: tuple[str, str, str], chosen: Cached) -> None:
        """Keep the record a key will be read from, and announce it on :attr:`arrivals` (so a
        reader in another thread can act on each record as it comes). Called under the lock."""
        self.used[ident] = chosen
        self.arrivals.put(ident)

    def _stamp(self) -> datetime:
        """This moment on the run's clock: ``now`` plus the time elapsed since the store began
        (the wall clock in a run; a test's chosen ``now`` stays its reference)."""
        return self.now + timedelta(seconds=time.monotonic() - self._started)

    def _fresh(self, cached: Cached | None) -> bool:
        return (cached is not None and cached.fetch.outcome in ANSWERED
                and self.now - cached.fetched_at <= timedelta(days=self.refresh_days))

    def _settle(self, ident: tuple[str, str, str], fetch: Fetch, at: datetime) -> Fetch:
        """Record a fetched answer; a failed refresh keeps the older answered record."""
        chosen = Cached(fetch, at)
        cached = self.cache.get(ident)
        with self._lock:
            self.counts["lookups_fetched"] += 1
            if fetch.outcome not in ANSWERED and cached is not None and \
                    cached.fetch.outcome in ANSWERED:
                self.counts["stale_used_after_error"] += 1
                chosen = cached  # the registry failed now; an older answer is still an answer
            self._use(ident, chosen)
        return chosen.fetch

    def _count_requests(self, registry: str, client: Client, before: int) -> None:
        sent = client.session.stats.mine() - before
        with self._lock:
            self.counts["requests"] += sent
            self.counts[f"requests_{registry}"] += sent

    def get(self, registry: str, kind: str, key: str) -> Fetch:
        ident = (registry, kind, key)
        if ident in self.used:
            return self.used[ident].fetch
        cached = self.cache.get(ident)
        if self._fresh(cached):
            with self._lock:
                self.counts["from_cache"] += 1
                self._use(ident, cached)
            return cached.fetch
        if registry not in self.clients:
            chosen = cached or Cached(
                Fetch(registry, kind, key, None, "error", None, "offline_no_cached_record"),
                self.now)
            with self._lock:
                self.counts["offline"] += 1
                self._use(ident, chosen)
            return chosen.fetch
        client = self.clients[registry]
        before = client.session.stats.mine()
        fetch = client.work(key) if kind == "work" else client.search(key)
        self._count_requests(registry, client, before)
        return self._settle(ident, fetch, self._stamp())

    def _due(self, registry: str, kind: str, keys: Iterable[str]) -> list[str]:
        """The keys :meth:`get` would fetch: not used yet and not fresh in the cache."""
        return [k for k in dict.fromkeys(keys) if (registry, kind, k) not in self.used
                and not self._fresh(self.cache.get((registry, kind, k)))]

    def prefetch(self, registry: str, dois: Iterable[str], searches: Iterable[str] = ()) -> None:
        """Fetch every DOI lookup of ``registry`` that :meth:`get` would send, in lists, and the
        given searches (query texts), one request at a time.

        A DOI a list answer does not settle, or that cannot go in a list, is looked up on its
        own here. Lists, the single-DOI checks they call for and the searches are interleaved:
        single records have a limiter of their own, lists and searches share the other, and
        whichever may start sooner goes next (a single check on a tie, then a list, then a
        search, as lists reveal the checks to make), so no kind waits for another to finish.
        Each list takes every n-th DOI (n lists in all) rather than a run of neighbours, so the
        DOIs a registry lacks, which cluster by prefix, surface with the first list and their
        checks start at once instead of after the lists. Which DOIs share a list, and the order
        of the requests, change nothing else: the same requests, the same answers.
        """
        client = self.clients.get(registry)
        if client is None or not self.batched:
            return
        due = self._due(registry, "work", dois)
        todo = [d for d in due if client.batchable(d)]
        size = max(1, int(client.batch_limit))
        count = -(-len(todo) // size)
        lists = deque(todo[j::count] for j in range(count))
        singles = deque(d for d in due if not client.batchable(d))
        queries = deque(self._due(registry, "search", searches))
        session = client.session
        while lists or singles or queries:
            single_in = session.limiter.ready_in() if singles else float("inf")
            list_in = session.list_limiter.ready_in() if lists or queries else float("inf")
            if singles and single_in <= list_in:
                self.get(registry, "work", singles.popleft())
            elif lists:
                singles.extend(self._fetch_list(registry, client, lists.popleft()))
            else:
                self.get(registry, "search", queries.popleft())

    def _fetch_list(self, registry: str, client: Client, chunk: list[str]) -> tuple[str, ...]:
        """One list request: settle what it answered; return the DOIs it left unanswered."""
        before = client.session.stats.mine()
        batch = client.work_list(chunk)
        self._count_requests(registry, client, before)
        at = self._stamp()
        for doi in chunk:
            if doi in batch.fetches:
                self._settle((registry, "work", doi), batch.fetches[doi], at)
        with self._lock:
            self.counts["batch_unanswered"] += len(batch.unanswered)
        return batch.unanswered

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
