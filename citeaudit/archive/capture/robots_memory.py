"""robots.txt remembered across crawls, within its cache lifetime (RFC 9309 section 2.4).

A crawl asks each host for its robots.txt once (:class:`citeaudit.archive.capture.fetcher.
RobotsCache`); this module makes the answer last beyond the crawl: every robots.txt answer a
crawl receives (each request of it: the robots.txt URL and each redirect hop, with its status,
``Location`` and body, and the time it arrived) is kept in the raw folder,
``RAW/robots/<time>-<pid>.parquet`` (one file per crawl, temp file then rename), the way the
registry answers are kept. A later crawl, ``citeaudit archive`` or the pipeline's live capture,
reads the newest answer per URL (``sql/archive/select_remembered_robots.sql``) and uses it
instead of asking while it is at most ``fetch.robots_max_age_hours`` old (default 24: RFC 9309
says a crawler should not use a cached robots.txt for more than 24 hours; 0 asks every crawl).
A reused answer is logged as a ``fetch_log`` row (purpose ``robots``, outcome ``robots_reused``,
its status, and its fetch time and age in ``detail``); no request is sent and nothing is
written to the WARC (the answer was archived by the crawl that fetched it).

Only answers are remembered: a robots.txt that could not be fetched (DNS, connection, timeout)
or answered 5xx / 429 (which disallow the whole host) is asked again by the next crawl, so a
passing outage never outlives the crawl that saw it. ``citeaudit archive --refresh-robots``
(:func:`mark_refresh`) makes every answer fetched before it stale: each host is asked again
once, and later crawls reuse the new answers.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from citeaudit import duck, parquet_io, storage
from citeaudit.archive.capture.fetch_log import FetchLog
from citeaudit.archive.capture.fetcher import Attempt
from citeaudit.archive.capture.warc_writer import HttpExchange

FOLDER = "robots"
REFRESH_FILE = "refresh.json"
REUSED = "robots_reused"
SCHEMA = pa.schema([
    ("url", pa.string()),
    ("fetched_at", pa.timestamp("us", tz="UTC")),
    ("http_status", pa.int32()),
    ("location", pa.string()),
    ("body", pa.binary()),
])


def _remembered_status(status: int | None) -> bool:
    """An answer worth keeping: 2xx, 3xx and 4xx but 429 (5xx and 429 disallow all for now,
    an outage the next crawl asks about again)."""
    return status is not None and status < 500 and status != 429


def mark_refresh(raw: Path, at: dt.datetime) -> None:
    """Make every robots.txt answer fetched before ``at`` stale for every later crawl."""
    folder = storage.path(raw) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    (folder / REFRESH_FILE).write_text(
        json.dumps({"refreshed_at": at.astimezone(dt.UTC).isoformat()}) + "\n")


def refreshed_at(raw: Path) -> dt.datetime | None:
    """The last forced refresh (:func:`mark_refresh`), None when there was none."""
    path = storage.path(raw) / FOLDER / REFRESH_FILE
    if not path.exists():
        return None
    try:
        return dt.datetime.fromisoformat(json.loads(path.read_text())["refreshed_at"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: field refreshed_at is not an ISO time ({exc}); delete the "
                         "file, or run `citeaudit archive --refresh-robots` to write it anew"
                         ) from exc


@dataclass(frozen=True)
class Remembered:
    """One kept robots.txt answer."""

    url: str
    fetched_at: dt.datetime
    http_status: int
    location: str | None
    body: bytes


def read(raw: Path) -> dict[str, Remembered]:
    """The newest kept answer per requested URL (every crawl's file under ``RAW/robots``)."""
    folder = storage.path(raw) / FOLDER
    if not any(folder.glob("*.parquet")):
        return {}
    con = duck.connect()
    rows = duck.query(con, "archive/select_remembered_robots",
                      {"glob": str(folder / "*.parquet")}).to_pylist()
    return {r["url"]: Remembered(r["url"], r["fetched_at"], r["http_status"], r["location"],
                                 r["body"]) for r in rows}


@dataclass
class RobotsMemory:
    """The robots.txt answers of earlier crawls and those of this one.

    ``known``: the kept answers (:func:`read`); ``max_age_hours``: how old one may be to be
    reused; ``now``: the crawl's clock; ``refreshed_at``: answers fetched before it are stale.
    ``fetched`` collects this crawl's answers for :meth:`save`.
    """

    known: dict[str, Remembered]
    max_age_hours: float
    now: dt.datetime
    refreshed_at: dt.datetime | None = None
    fetched: list[Remembered] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    @classmethod
    def load(cls, raw: Path, max_age_hours: float, now: dt.datetime) -> RobotsMemory:
        """The memory of ``raw`` for a crawl at ``now`` (none read when ``max_age_hours`` is 0
        or the raw folder is on object storage: every robots.txt is asked)."""
        if max_age_hours <= 0 or storage.is_remote(raw):
            return cls({}, max_age_hours, now)
        return cls(read(raw), max_age_hours, now, refreshed_at(raw))

    def fresh(self, url: str) -> Remembered | None:
        """The kept answer of ``url`` when it may be reused now, else None."""
        kept = self.known.get(url)
        if kept is None:
            return None
        if self.refreshed_at is not None and kept.fetched_at < self.refreshed_at:
            return None
        age = self.now - kept.fetched_at
        if age < dt.timedelta(0) or age > dt.timedelta(hours=self.max_age_hours):
            return None
        return kept

    def fetcher(self, fetch: Callable[[str], Attempt], log: FetchLog
                ) -> Callable[[str], Attempt]:
        """``fetch`` (one robots.txt request: sent, archived and logged by the crawl) with the
        memory in front: a fresh kept answer is returned without a request, with a
        ``robots_reused`` row in ``log``; a new answer is kept for :meth:`save`."""

        def remembered_fetch(url: str) -> Attempt:
            kept = self.fresh(url)
            if kept is None:
                att = fetch(url)
                if att.exchange is not None and _remembered_status(att.status):
                    with self._lock:
                        self.fetched.append(Remembered(
                            url, att.exchange.fetched_at.astimezone(dt.UTC), int(att.status),
                            att.location, att.exchange.body))
                return att
            return self._reuse(kept, log)

        return remembered_fetch

    def _reuse(self, kept: Remembered, log: FetchLog) -> Attempt:
        hours = (self.now - kept.fetched_at) / dt.timedelta(hours=1)
        detail = (f"robots.txt fetched at {kept.fetched_at.strftime('%Y-%m-%dT%H:%M:%SZ')}, "
                  f"{hours:.1f} h old; reused (fetch.robots_max_age_hours "
                  f"{self.max_age_hours:g}), not asked again")
        log.add(cited_url=None, canonical_key=None, url=kept.url, purpose="robots", hop=0,
                attempt=0, requested_at=self.now, elapsed_ms=0, outcome=REUSED,
                http_status=kept.http_status, bytes=len(kept.body),
                redirect_location=kept.location if 300 <= kept.http_status < 400 else None,
                detail=detail)
        headers = [("Location", kept.location)] if kept.location else []
        exchange = HttpExchange(
            url=kept.url, request_line="", request_headers=[],
            status_line=f"HTTP/1.1 {kept.http_status}", response_headers=headers,
            protocol="HTTP/1.1", body=kept.body, ip_address=None, fetched_at=kept.fetched_at)
        return Attempt(kept.url, REUSED, self.now, 0, exchange=exchange,
                       status=kept.http_status, detail=detail, location=kept.location)

    def save(self, raw: Path) -> Path | None:
        """Keep this crawl's answers: ``RAW/robots/<time>-<pid>.parquet`` (temp file, then
        rename); None when it fetched none."""
        if not self.fetched or storage.is_remote(raw):
            return None
        rows = sorted(self.fetched, key=lambda r: (r.url, r.fetched_at))
        table = pa.Table.from_pylist([r.__dict__ for r in rows], schema=SCHEMA)
        folder = storage.path(raw) / FOLDER
        folder.mkdir(parents=True, exist_ok=True)
        stamp = self.now.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
        final = folder / f"{stamp}-{os.getpid()}.parquet"
        temp = parquet_io.temp_name(final)
        pq.write_table(table, temp)
        os.replace(temp, final)
        return final
