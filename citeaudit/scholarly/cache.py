"""The registry cache (asset ``scholarly_records``): what each registry answered, and when.

Layout: ``scholarly_records/observation_date=D/codebook=V/data.parquet``: each judged partition
writes the records its citations used (fetched in this run or reused). The cache is the union
of every partition on disk: per (registry, kind, lookup_key) every distinct *answered* record
(found / not_found), or the newest error of a key never answered, so a run with the registries
unreachable still checks from what an earlier run fetched. ``kind`` is 'work' (lookup_key = the
DOI) or 'search' (lookup_key = the query text).

The cache is the project's memory across nights, dates and codebooks. Which record a partition
reads is decided from the records on disk and the partition's own date, never from the wall
clock, so a rerun or a backfill reads the record its first run read and writes the same bytes:

- a record's age is counted from its ``fetched_at`` to the end of the observed day (``as_of``:
  the day after the observation date, 00:00 UTC); a record fetched after that moment (every
  record of a nightly run, or of a backfill) has no age;
- an answered record is *fresh* for a partition when its age is at most ``refresh_days`` and it
  was fetched after the last forced refresh (:func:`mark_refresh`, ``citeaudit run
  --refresh-registries``); of the fresh records of a key the **oldest** is read: the answer
  already in use stays in use until it is too old, so records a later night fetched do not
  change what an earlier date read;
- no fresh record: the registry is asked; if it cannot answer, the newest answered record is
  kept and used (an older answer is still an answer), else the error is the record.

Records are fetched (and stamped with ``fetched_at``, the wall clock when the answer arrived)
only when nothing fresh is on hand, so a night that cites yesterday's DOIs asks nothing for them.

DOI lookups that need fetching go to a registry in lists (:meth:`RecordStore.prefetch`, up to
the client's ``batch_limit`` DOIs per request, under the same rate limit and retries); a DOI
the list answer leaves out gets its own ``/works/{doi}`` request, the only answer that may say
"not found". ``fetched_at`` is per record: when its answer arrived.
"""

from __future__ import annotations

import json
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


Key = tuple[str, str, str]
REFRESH_FILE = ".citeaudit/registry_refresh.json"


def read_cache(derived: Path) -> dict[Key, tuple[Cached, ...]]:
    """Every distinct record on disk per key, oldest first: each answered record once, or (a
    key never answered) its newest error. The store chooses among them (see module doc)."""
    glob = parquet_io.dataset_glob(derived, ASSET, 2)
    if not list((storage.path(derived) / ASSET).glob("*/*/" + parquet_io.DATA_FILE)):
        return {}
    con = duck.connect()
    rows = duck.query(con, "scholarly/select_cached_records", {"glob": glob}).to_pylist()
    out: dict[Key, list[Cached]] = {}
    for r in rows:
        out.setdefault((r["registry"], r["kind"], r["lookup_key"]), []).append(Cached(
            Fetch(r["registry"], r["kind"], r["lookup_key"], r["http_status"], r["outcome"],
                  r["raw_json"], r["detail"] or ""),
            r["fetched_at"]))
    return {k: tuple(v) for k, v in out.items()}


def mark_refresh(derived: Path, at: datetime) -> None:
    """Make every registry record fetched before ``at`` stale for every later run (the answers
    are asked again; one is still used when its registry cannot answer). Kept in DERIVED, so a
    later rerun reads the refreshed answers, not the older ones, whichever executor runs it."""
    path = storage.path(derived) / REFRESH_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"refreshed_at": at.astimezone(UTC).isoformat()}) + "\n")


def refreshed_at(derived: Path) -> datetime | None:
    """The last forced refresh (:func:`mark_refresh`), None when there was none."""
    path = storage.path(derived) / REFRESH_FILE
    if not path.exists():
        return None
    try:
        return datetime.fromisoformat(json.loads(path.read_text())["refreshed_at"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: field refreshed_at is not an ISO time ({exc}); delete the "
                         "file, or run `citeaudit run --refresh-registries` to write it anew"
                         ) from exc


def end_of_day(observation_date: str) -> datetime:
    """The end of an observed day (the next day, 00:00 UTC): the moment ages are counted to."""
    return datetime.fromisoformat(observation_date).replace(tzinfo=UTC) + timedelta(days=1)


def age_days(fetched_at: datetime, as_of: datetime) -> int:
    """Whole days from a record's fetch to ``as_of``; 0 for a record fetched after it."""
    return max(0, (as_of - fetched_at) // timedelta(days=1))


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

    ``cache`` maps a key to its records on disk (:func:`read_cache`; a single record is taken
    as one). ``now`` is the clock that stamps fetched records (the wall clock in a run);
    ``as_of`` the moment freshness and ages are counted to (the end of the observed day in a
    run; ``now`` when not given); ``refreshed_at`` the last forced refresh (records fetched
    before it are never fresh).
    """

    cache: dict[Key, Cached | tuple[Cached, ...]]
    clients: dict[str, Client]
    refresh_days: int
    now: datetime = field(default_factory=lambda: datetime.now(UTC))
    batched: bool = True
    used: dict[Key, Cached] = field(default_factory=dict)
    counts: Counter = field(default_factory=Counter)
    as_of: datetime | None = None
    refreshed_at: datetime | None = None

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self.arrivals: queue.SimpleQueue[Key] = queue.SimpleQueue()
        if self.as_of is None:
            self.as_of = self.now
        self.cache = {k: (v,) if isinstance(v, Cached) else tuple(v)
                      for k, v in self.cache.items()}

    def age(self, record: Cached) -> int:
        """The record's age in whole days at ``as_of`` (0: fetched after it)."""
        return age_days(record.fetched_at, self.as_of)

    def _use(self, ident: tuple[str, str, str], chosen: Cached) -> None:
        """Keep the record a key will be read from, and announce it on :attr:`arrivals` (so a
        reader in another thread can act on each record as it comes). Called under the lock."""
        self.used[ident] = chosen
        self.arrivals.put(ident)

    def _stamp(self) -> datetime:
        """This moment on the run's clock: ``now`` plus the time elapsed since the store began
        (the wall clock in a run; a test's chosen ``now`` stays its reference)."""
        return self.now + timedelta(seconds=time.monotonic() - self._started)

    def _is_fresh(self, c: Cached) -> bool:
        return (c.fetch.outcome in ANSWERED
                and self.as_of - c.fetched_at <= timedelta(days=self.refresh_days)
                and (self.refreshed_at is None or c.fetched_at >= self.refreshed_at))

    def _fresh(self, ident: Key) -> Cached | None:
        """The oldest fresh record of a key (the answer in use stays in use), or None."""
        return next((c for c in self.cache.get(ident, ()) if self._is_fresh(c)), None)

    def _fallback(self, ident: Key) -> Cached | None:
        """Without a fresh record: the newest answered one, else the newest record at all."""
        records = self.cache.get(ident, ())
        answered = [c for c in records if c.fetch.outcome in ANSWERED]
        return (answered or list(records) or [None])[-1]

    def _settle(self, ident: Key, fetch: Fetch, at: datetime) -> Fetch:
        """Record a fetched answer; a failed refresh keeps the older answered record."""
        chosen = Cached(fetch, at)
        cached = self._fallback(ident)
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
        cached = self._fresh(ident)
        if cached is not None:
            with self._lock:
                self.counts["from_cache"] += 1
                self._use(ident, cached)
            return cached.fetch
        if registry not in self.clients:
            # no clock in an offline record: stamped ``as_of``, so an offline rerun is the same
            chosen = self._fallback(ident) or Cached(
                Fetch(registry, kind, key, None, "error", None, "offline_no_cached_record"),
                self.as_of)
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
                and self._fresh((registry, kind, k)) is None]

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
