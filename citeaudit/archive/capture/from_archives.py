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
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
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
    memento_time,
    memento_url,
    parse_index,
    query_url,
    status_line,
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

    def _get(self, url: str) -> Attempt:
        s = self.s
        host = (urlsplit(url).netloc or "").lower()
        with self.gate.slot(host) as defer:
            att = http_get(url, via=None, user_agent=self.ua,
                           connect_timeout=s.connect_timeout_seconds,
                           read_timeout=s.read_timeout_seconds,
                           total_timeout=s.total_timeout_seconds, max_body=s.max_body_bytes,
                           scope=self.scope, trusted=_origin(url) in self.trusted)
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
                          archived_status: int | None = None) -> tuple[Attempt, int]:
        """GET with the live crawl's bounded retries; the last attempt and its number. A
        memento whose index lists a 503 (``archived_status``) replays as 503: not retried."""
        for attempt in range(1, self.s.max_retries + 2):
            att = self._get(url)
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

    def _page_in(self, archive: ArchiveSettings, row: dict) -> str:
        purpose = f"archive:{archive.name}"
        url, ref, key = row["canonical_url"], row["reference_time"], row["canonical_key"]
        seen: set[str] = set()
        for hop in range(self.s.max_redirects + 1):
            seen.add(url)
            q = query_url(archive, url, ref, self.window)
            asked = self.no_capture.get(q)
            if asked is not None and archive.no_capture_cache_days > 0 and \
                    self.now - asked < dt.timedelta(days=archive.no_capture_cache_days):
                self.log.add(
                    cited_url=row["canonical_url"], canonical_key=key, url=q, purpose=purpose,
                    hop=hop, attempt=0, requested_at=self.now,
                    outcome="archive_no_capture_cached",
                    detail=f"the same question answered 'no capture' at {asked:%Y-%m-%dT%H:%M:%SZ}"
                           f"; not asked again within {archive.no_capture_cache_days:g} days "
                           f"(archives[].no_capture_cache_days)")
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
