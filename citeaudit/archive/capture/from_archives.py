"""The archive source: copy the capture closest to a citation's reference time from a web archive.

For a cited URL that still has no readable capture inside the reference window after what was
supplied and fetched live, each configured archive is asked in order (the way Wikipedia's
InternetArchiveBot asks for the snapshot closest to the access date):

1. its index for the captures of the URL inside the window (the three index APIs and how their
   answers are read live in :mod:`citeaudit.archive.lookup.archives`);
2. :func:`~citeaudit.archive.lookup.choose` keeps the closest capture at or before the
   reference time, else the closest after it, inside the window; a capture without a numeric
   status is never chosen;
3. the capture is fetched in raw form (``<ts>id_/<url>``) and written into our WARC as a
   ``response`` record (target URI the original URL, WARC-Date the memento's datetime) and a
   ``metadata`` record naming the archive and the memento URL.

The status written is the archive index's ``status`` field, never the replay's: pywb replays
an archived 404 with HTTP 200 in some modes, so the replay cannot say what was archived. A
replay answering exactly the 5xx the index lists is that capture (pywb's raw mode replays an
archived 500 as 500; not retried); any other 5xx is the archive's own error (``archive_error``). An
archived redirect is followed inside the same archive (each hop its own lookup, at most
``fetch.max_redirects``).

The configured archive's own origin is the operator's choice (like ``fetch.via``); any other URL
an archive points to (an availability API's snapshot URL, a redirect elsewhere) obeys the
crawl's scope (:mod:`citeaudit.archive.capture.scope`: no private addresses, the host lists).
Every request goes through the live crawl's politeness (:class:`HostGate` per archive host,
the ``fetch:`` timeouts, retries after 429/503/resets) and leaves ``fetch_log`` rows with
purpose ``archive:<name>``: ``archive_fetched``, ``archive_no_capture`` (the archive answered
and holds nothing usable in the window), ``archive_error`` (unreachable, an error status, an
unreadable answer: unresolved, never a negative finding), ``retry_scheduled``,
``archive_no_capture_cached`` (the very same index query was answered "no capture" within
``archives[].no_capture_cache_days``, default 7, in an earlier crawl of the date: not asked
again).

A ``memento`` archive (RFC 7089: a TimeGate or an aggregator such as the Memento Time Travel
service) has no index to list: its TimeGate ``<url>/<URI-R>`` is asked with ``Accept-Datetime``
(the reference time) and redirects to the memento it judges closest (before or after); that
memento is fetched (raw ``id_`` form when its URL has a Wayback-style timestamp), and its
``Memento-Datetime`` must lie inside the window. The status written is the memento's own:
RFC 7089 mementos answer with the archived status, and a response without
``Memento-Datetime`` is not a memento (``archive_error``). A TimeGate's 404 is
``archive_no_capture``.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pyarrow as pa

from citeaudit.archive.capture.fetch_log import CrawlResult, FetchLog
from citeaudit.archive.capture.fetcher import Attempt, HostGate, http_get
from citeaudit.archive.capture.scope import from_settings as scope_from_settings
from citeaudit.archive.capture.warc_writer import (
    FetchWarcWriter,
    Memento,
    default_info,
    software_version,
)
from citeaudit.archive.index import url_to_urlkey
from citeaudit.archive.lookup import (
    Candidate,
    choose,
    http_datetime,
    link_relations,
    memento_time,
    memento_url,
    parse_http_datetime,
    parse_index,
    query_url,
    raw_memento_url,
    status_line,
    timegate_url,
    timestamp14,
)
from citeaudit.config import ArchiveSettings, FetchSettings

OUTCOMES = ("archive_fetched", "archive_no_capture", "archive_no_capture_cached",
            "archive_error", "retry_scheduled")
"""Outcome names of the archive source (see the module docstring)."""

RETRY_STATUSES = (429, 503)


def _origin(url: str) -> str:
    """scheme://host:port of a URL (default ports spelled out), for comparing origins."""
    try:
        p = urlsplit(url)
        port = p.port or (443 if p.scheme.lower() == "https" else 80)
    except ValueError:
        return ""
    return f"{p.scheme.lower()}://{(p.hostname or '').lower()}:{port}"


class ArchiveLookup:
    """Asks the configured archives for one date's missing pages; see the module docstring.

    ``log`` is the crawl's log (``add(**row)``); one WARC writer per archive, files
    ``citeaudit-<date>-<seq>-archive-<name>.warc.gz``."""

    def __init__(self, archives: tuple[ArchiveSettings, ...], settings: FetchSettings,
                 raw, crawl_date: str, observation_date: str, log,
                 sleep: Callable[[float], None] | None = None) -> None:
        self.archives = archives
        self.s = settings
        self.log = log
        self.sleep = sleep or time.sleep
        self.ua = settings.user_agent_string(software_version())
        self.gate = HostGate(settings.per_host_delay_seconds, self.sleep)
        self.window = dt.timedelta(hours=settings.reference_window_hours)
        self.scope = scope_from_settings(settings)
        self.trusted = {_origin(a.url) for a in archives}
        self.now = dt.datetime.now(dt.UTC)  # wall clock, as the log's requested_at
        # index query URL -> when an archive last answered it with no usable capture
        self.no_capture: dict[str, dt.datetime] = {}
        self.writers = {a.name: FetchWarcWriter(
            raw, crawl_date, observation_date, max_bytes=settings.warc_max_bytes,
            info=default_info(settings.operator, settings.contact, self.ua, None) | {
                "source": f"copied from web archive {a.name} ({a.api}, {a.url})"},
            archive=a.name) for a in archives}

    def close(self) -> list:
        """Close every writer; the WARC files written."""
        files = []
        for name in sorted(self.writers):
            files += self.writers[name].close()
        return files

    def _get(self, url: str, headers: tuple[tuple[str, str], ...] = ()) -> Attempt:
        s = self.s
        host = (urlsplit(url).netloc or "").lower()
        with self.gate.slot(host) as defer:
            att = http_get(url, via=None, user_agent=self.ua,
                           connect_timeout=s.connect_timeout_seconds,
                           read_timeout=s.read_timeout_seconds,
                           total_timeout=s.total_timeout_seconds, max_body=s.max_body_bytes,
                           scope=self.scope, trusted=_origin(url) in self.trusted,
                           extra_headers=headers)
            if att.retry_after is not None and att.status in RETRY_STATUSES:
                defer(min(att.retry_after, s.max_retry_after_seconds))
        return att

    def _row(self, att: Attempt, row: dict, purpose: str, hop: int, attempt: int, outcome: str,
             detail: str | None, where=None, key: str | None = None) -> None:
        self.log.add(
            cited_url=row["canonical_url"], canonical_key=key or row["canonical_key"],
            url=att.url, purpose=purpose, hop=hop, attempt=attempt,
            requested_at=att.started_at, elapsed_ms=att.elapsed_ms, outcome=outcome,
            http_status=att.status, bytes=len(att.exchange.body) if att.exchange else None,
            ip_address=att.exchange.ip_address if att.exchange else None,
            record_type="response" if where else None,
            warc_file=where.file if where else None, warc_offset=where.offset if where else None,
            warc_length=where.length if where else None, detail=detail)

    def _get_with_retries(self, url: str, row: dict, purpose: str, hop: int,
                          archived_status: int | None = None,
                          headers: tuple[tuple[str, str], ...] = ()) -> tuple[Attempt, int]:
        """GET with the live crawl's bounded retries; the last attempt and its number. A
        memento whose index lists a 503 (``archived_status``) replays as 503: not retried."""
        for attempt in range(1, self.s.max_retries + 2):
            att = self._get(url, headers)
            retryable = (att.status in RETRY_STATUSES and att.status != archived_status) \
                or att.outcome == "connection_reset"
            if not retryable or attempt > self.s.max_retries:
                return att, attempt
            wait = att.retry_after if att.retry_after is not None else \
                self.s.retry_backoff_seconds * 2 ** (attempt - 1)
            wait = min(wait, self.s.max_retry_after_seconds)
            self._row(att, row, purpose, hop, attempt, "retry_scheduled", f"retry in {wait:g} s")
            if att.retry_after is None:
                self.sleep(wait)
        raise AssertionError("unreachable")

    def page(self, row: dict) -> str:
        """Ask the archives in order for one planned page; the last outcome."""
        outcome = "archive_no_capture"
        for archive in self.archives:
            outcome = self._page_in(archive, row)
            if outcome == "archive_fetched":
                break
        return outcome

    def _failed(self, att: Attempt, archived_status: int | None = None) -> str | None:
        """Why an answer is no usable answer (None when it is one)."""
        if att.exchange is None:
            return f"{att.outcome}: {att.detail or ''}".strip()
        if att.status in RETRY_STATUSES and att.status != archived_status:
            return f"HTTP {att.status} after {self.s.max_retries} retries"
        if att.outcome == "too_large":
            return f"answer larger than fetch.max_body_bytes ({self.s.max_body_bytes})"
        return None

    def _cached(self, archive: ArchiveSettings, q: str, row: dict, purpose: str, hop: int,
                key: str) -> bool:
        """True (and a row ``archive_no_capture_cached``) when ``q`` was answered "no
        capture" within ``archives[].no_capture_cache_days``."""
        asked = self.no_capture.get(q)
        if asked is None or archive.no_capture_cache_days <= 0 or \
                self.now - asked >= dt.timedelta(days=archive.no_capture_cache_days):
            return False
        self.log.add(
            cited_url=row["canonical_url"], canonical_key=key, url=q, purpose=purpose,
            hop=hop, attempt=0, requested_at=self.now, outcome="archive_no_capture_cached",
            detail=f"the same question answered 'no capture' at {asked:%Y-%m-%dT%H:%M:%SZ}"
                   f"; not asked again within {archive.no_capture_cache_days:g} days "
                   f"(archives[].no_capture_cache_days)")
        return True

    def _page_in(self, archive: ArchiveSettings, row: dict) -> str:
        if archive.api == "memento":
            return self._memento_in(archive, row)
        purpose = f"archive:{archive.name}"
        url, ref, key = row["canonical_url"], row["reference_time"], row["canonical_key"]
        seen: set[str] = set()
        for hop in range(self.s.max_redirects + 1):
            seen.add(url)
            q = query_url(archive, url, ref, self.window)
            if self._cached(archive, q, row, purpose, hop, key):
                return "archive_no_capture"
            att, n = self._get_with_retries(q, row, purpose, hop)
            why = self._failed(att)
            if why is None and att.status != 200:
                why = f"index answered HTTP {att.status}"
            cands: list[Candidate] = []
            if why is None:
                try:
                    cands = parse_index(archive.api, att.exchange.body)
                except ValueError as exc:
                    why = str(exc)
            if why is not None:
                self._row(att, row, purpose, hop, n, "archive_error", why, key=key)
                return "archive_error"
            pick = choose(cands, ref, self.window)
            if pick is None:
                nearest = min(cands, key=lambda c: abs(c.time - ref), default=None)
                self._row(att, row, purpose, hop, n, "archive_no_capture",
                          f"{len(cands)} capture(s) listed, none with a status inside "
                          f"±{self.s.reference_window_hours:g} h of {timestamp14(ref)}"
                          + (f" (nearest {nearest.timestamp})" if nearest else ""), key=key)
                return "archive_no_capture"
            location = self._fetch_memento(archive, pick, url, row, purpose, hop, key, q)
            if location is None:
                return "archive_error"
            if not (300 <= pick.status < 400 and location):
                return "archive_fetched"
            try:
                nxt = urljoin(pick.url, location.strip())
            except ValueError:
                return "archive_fetched"
            if nxt in seen or not nxt.lower().startswith(("http://", "https://")):
                return "archive_fetched"
            url, key = nxt, url_to_urlkey(nxt)
            ref = pick.time
        return "archive_fetched"

    def _memento_in(self, archive: ArchiveSettings, row: dict) -> str:
        """One page at a Memento TimeGate (RFC 7089): ask ``<url>/<URI-R>`` with
        ``Accept-Datetime`` (the reference time), follow its redirect to the memento (or take
        its own answer when it carries ``Memento-Datetime``), fetch the memento raw and keep it
        when its ``Memento-Datetime`` lies inside the window; an archived redirect is looked up
        again at the TimeGate. The status written is the memento's own (a memento answers with
        the archived status); a response without ``Memento-Datetime`` is no memento
        (``archive_error``), a TimeGate's 404 means it holds none (``archive_no_capture``)."""
        purpose = f"archive:{archive.name}"
        url, ref, key = row["canonical_url"], row["reference_time"], row["canonical_key"]
        seen: set[str] = set()
        for hop in range(self.s.max_redirects + 1):
            seen.add(url)
            tg = timegate_url(archive, url)
            if self._cached(archive, tg, row, purpose, hop, key):
                return "archive_no_capture"
            accept = (("Accept-Datetime", http_datetime(ref)),)
            att, n = self._get_with_retries(tg, row, purpose, hop, headers=accept)
            why = self._failed(att)
            mdt = _header(att, "Memento-Datetime")
            if why is None and mdt is None and att.status == 404:
                self._row(att, row, purpose, hop, n, "archive_no_capture",
                          f"the TimeGate holds no memento of {url} (HTTP 404)", key=key)
                return "archive_no_capture"
            loc = _header(att, "Location")
            if why is None and mdt is not None:
                murl = _header(att, "Content-Location") or tg  # the TimeGate is the memento
                murl = urljoin(tg, murl)
            elif why is None and att.status and 300 <= att.status < 400 and loc:
                murl = urljoin(tg, loc.strip())
            else:
                why = why or (f"TimeGate answered HTTP {att.status} without a memento "
                              "(no redirect, no Memento-Datetime)")
                self._row(att, row, purpose, hop, n, "archive_error", why, key=key)
                return "archive_error"
            named = memento_time(murl)
            if named is not None and abs(named - ref) > self.window:
                self._row(att, row, purpose, hop, n, "archive_no_capture",
                          f"the closest memento ({timestamp14(named)}) lies outside "
                          f"±{self.s.reference_window_hours:g} h of {timestamp14(ref)}", key=key)
                return "archive_no_capture"
            got = self._fetch_timegate_memento(archive, url, murl, ref, row, purpose, hop, key,
                                               tg, accept, att if mdt is not None else None)
            if got is None or got[0] in ("archive_error", "archive_no_capture"):
                return got[0] if got else "archive_error"
            status, location, when = got[1], got[2], got[3]
            if not (300 <= status < 400 and location):
                return "archive_fetched"
            try:
                nxt = urljoin(url, location.strip())
            except ValueError:
                return "archive_fetched"
            if nxt in seen or not nxt.lower().startswith(("http://", "https://")):
                return "archive_fetched"
            url, key, ref = nxt, url_to_urlkey(nxt), when
        return "archive_fetched"

    def _fetch_timegate_memento(self, archive: ArchiveSettings, target: str, murl: str,
                                ref: dt.datetime, row: dict, purpose: str, hop: int, key: str,
                                tg: str, accept: tuple[tuple[str, str], ...],
                                got: Attempt | None) -> tuple | None:
        """Fetch (unless the TimeGate's answer ``got`` is the memento) and write one memento;
        (outcome, status, Location, Memento-Datetime) or None."""
        n = 1
        if got is None:
            murl = raw_memento_url(murl)
            att, n = self._get_with_retries(murl, row, purpose, hop, headers=accept)
            for _ in range(self.s.max_redirects):
                # the archive's own redirect (to the exact memento): it is no memento itself
                loc = _header(att, "Location")
                if _header(att, "Memento-Datetime") is not None or not (
                        att.exchange and att.status and 300 <= att.status < 400 and loc):
                    break
                murl = raw_memento_url(urljoin(murl, loc.strip()))
                att, n = self._get_with_retries(murl, row, purpose, hop, headers=accept)
        else:
            att = got
        why = self._failed(att)
        when = parse_http_datetime(_header(att, "Memento-Datetime"))
        if why is None and when is None:
            why = ("no memento: the answer has no readable Memento-Datetime "
                   f"(HTTP {att.status})")
        if why is not None:
            self._row(att, row, purpose, hop, n, "archive_error", f"memento {murl}: {why}",
                      key=key)
            return ("archive_error",)
        if abs(when - ref) > self.window:
            # logged under the TimeGate's URL: that question is the one not to ask again
            self._row(replace(att, url=tg), row, purpose, hop, n, "archive_no_capture",
                      f"memento {murl} ({timestamp14(when)}) lies outside "
                      f"±{self.s.reference_window_hours:g} h of {timestamp14(ref)}", key=key)
            return ("archive_no_capture",)
        ex = att.exchange
        assert ex is not None and att.status is not None
        headers = [("X-Archive-Orig-Transfer-Encoding", v) if k.lower() == "transfer-encoding"
                   else (k, v) for k, v in ex.response_headers]
        location = _header(att, "Location") or ""
        original = link_relations(_header(att, "Link")).get("original")
        where = self.writers[archive.name].write_memento(Memento(
            url=target, memento_time=when, status_line=status_line(att.status),
            headers=headers, protocol=ex.protocol, body=ex.body, archive=archive.name,
            archive_url=archive.url, memento_url=murl, archive_status=att.status,
            replay_status=att.status, fetched_at=att.started_at, truncated=ex.truncated))
        self._row(att, row, purpose, hop, n, "archive_fetched",
                  f"memento {timestamp14(when)} (status {att.status}); TimeGate {tg}"
                  + (f"; Link original {original}" if original else ""), where=where, key=key)
        return ("archive_fetched", att.status, location, when)

    def _fetch_memento(self, archive: ArchiveSettings, pick: Candidate, target: str,
                       row: dict, purpose: str, hop: int, key: str, query: str) -> str | None:
        """Fetch one memento and write it with ``target`` (the URL looked up) as its target
        URI; returns its archived Location ("" when none), or None when nothing could be
        written (an ``archive_error`` row says why)."""
        murl = memento_url(archive, pick)
        att, n = self._get_with_retries(murl, row, purpose, hop, pick.status)
        for _ in range(self.s.max_redirects):
            # the archive's own redirect to the exact memento (not an archived redirect)
            if not (att.exchange and att.status and 300 <= att.status < 400 and att.location
                    and not 300 <= pick.status < 400):
                break
            murl = urljoin(murl, att.location)
            att, n = self._get_with_retries(murl, row, purpose, hop, pick.status)
        why = self._failed(att, pick.status)
        # the status is the index's; a raw replay of an archived 5xx answers that 5xx (the
        # capture), any other 5xx is the archive's own error
        if why is None and att.status is not None and att.status >= 500 \
                and att.status != pick.status:
            why = f"replay answered HTTP {att.status}"
        if why is not None:
            self._row(att, row, purpose, hop, n, "archive_error", f"memento {murl}: {why}",
                      key=key)
            return None
        ex = att.exchange
        headers = [("X-Archive-Orig-Transfer-Encoding", v) if k.lower() == "transfer-encoding"
                   else (k, v) for k, v in ex.response_headers]
        location = next((v for k, v in ex.response_headers if k.lower() == "location"), "")
        when = memento_time(murl) or pick.time
        where = self.writers[archive.name].write_memento(Memento(
            url=target, memento_time=when, status_line=status_line(pick.status),
            headers=headers, protocol=ex.protocol, body=ex.body, archive=archive.name,
            archive_url=archive.url, memento_url=murl, archive_status=pick.status,
            replay_status=att.status, fetched_at=att.started_at, truncated=ex.truncated))
        self._row(att, row, purpose, hop, n, "archive_fetched",
                  f"memento {timestamp14(when)} (archived status {pick.status}, replay "
                  f"{att.status}); index {query}", where=where, key=key)
        return location


def _header(att: Attempt, name: str) -> str | None:
    """A response header of an attempt (first one, any case), or None."""
    if att.exchange is None:
        return None
    low = name.lower()
    return next((v for k, v in att.exchange.response_headers if k.lower() == low), None)


def no_capture_answers(raw: Path, observation_date: str) -> dict[str, dt.datetime]:
    """Index queries an archive answered with no usable capture in this date's earlier crawl
    logs (query URL -> latest such answer): politeness to the archives, the same question is
    not asked again within ``archives[].no_capture_cache_days``."""
    from citeaudit.archive.capture.fetch_log import read_logs

    out: dict[str, dt.datetime] = {}
    for r in read_logs(raw, observation_date).to_pylist():
        if r["outcome"] == "archive_no_capture" and r["url"] and r["requested_at"] and (
                r["url"] not in out or r["requested_at"] > out[r["url"]]):
            out[r["url"]] = r["requested_at"]
    return out


def wanted(plan_rows: pa.Table) -> list[dict]:
    """The planned pages still without a readable capture inside the reference window."""
    return [r for r in plan_rows.to_pylist() if not r["has_reference_capture"]
            and r["reference_time"] is not None]


def lookup_archives(plan_rows: pa.Table, archives: tuple[ArchiveSettings, ...],
                    settings: FetchSettings, raw: Path, observation_date: str, *,
                    now: dt.datetime | None = None, sleep: Callable[[float], None] | None = None,
                    progress: Callable[[int, int], None] | None = None) -> CrawlResult:
    """Ask the archives, in order, for each planned page without a readable capture in its
    window (one page at a time: the archives' politeness is per archive host, not per page)."""
    now = now or dt.datetime.now(dt.UTC)
    log = FetchLog()
    pages = wanted(plan_rows)
    asker = ArchiveLookup(archives, settings, raw, now.astimezone(dt.UTC).date().isoformat(),
                          observation_date, log, sleep)
    asker.no_capture = no_capture_answers(raw, observation_date)
    try:
        for i, r in enumerate(pages, 1):
            try:
                asker.page(r)
            except Exception as exc:  # a bug must not lose the page: log it, go on
                log.add(cited_url=r["canonical_url"], canonical_key=r["canonical_key"],
                        url=r["canonical_url"], purpose="archive", hop=0, attempt=0,
                        outcome="internal_error", detail=f"{type(exc).__name__}: {exc}")
            if progress:
                progress(i, len(pages))
    finally:
        files = asker.close()
    return CrawlResult(log.table(), files)
