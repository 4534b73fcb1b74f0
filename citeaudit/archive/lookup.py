"""Archive lookup: copy the capture closest to a citation's reference time from a web archive.

For a cited URL that still has no readable capture inside the reference window after what was
supplied and fetched live, each configured archive is asked in order (the way Wikipedia's
InternetArchiveBot asks for the snapshot closest to the access date):

1. its index for the captures of the URL inside the window: the pywb / OpenWayback CDX server
   API (``sort=closest&closest=<ts>``, one JSON object per line), the Wayback Machine's CDX API
   (a JSON array of rows, the first one naming the fields) or its availability API (one
   ``closest`` snapshot);
2. :func:`choose` keeps the closest capture at or before the reference time, else the closest
   after it, inside the window; a capture without a numeric status is never chosen;
3. the capture is fetched in raw form (``<ts>id_/<url>``) and written into our WARC as a
   ``response`` record (target URI the original URL, WARC-Date the memento's datetime) and a
   ``metadata`` record naming the archive and the memento URL.

The status written is the archive index's ``status`` field, never the replay's: pywb replays
an archived 404 with HTTP 200 in some modes, so the replay cannot say what was archived. An
archived redirect is followed inside the same archive (each hop its own lookup, at most
``fetch.max_redirects``).

Every request goes through the live crawl's politeness (:class:`HostGate` per archive host,
the ``fetch:`` timeouts, retries after 429/503/resets) and leaves ``fetch_log`` rows with
purpose ``archive:<name>``: ``archive_fetched``, ``archive_no_capture`` (the archive answered
and holds nothing usable in the window), ``archive_error`` (unreachable, an error status, an
unreadable answer: unresolved, never a negative finding), ``retry_scheduled``.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote, urljoin, urlsplit

import pyarrow as pa

from citeaudit.archive.fetcher import Attempt, HostGate, http_get
from citeaudit.archive.url_keys import url_to_urlkey
from citeaudit.archive.warc_writer import FetchWarcWriter, Memento, default_info, software_version
from citeaudit.config import ArchiveSettings, FetchSettings

OUTCOMES = ("archive_fetched", "archive_no_capture", "archive_error", "retry_scheduled")
"""Outcome names of the archive source (see the module docstring)."""

RETRY_STATUSES = (429, 503)
TS_FORMAT = "%Y%m%d%H%M%S"
_TS_IN_URL = re.compile(r"/(\d{14})(?:[a-z]{2}_)?/")


@dataclass(frozen=True)
class Candidate:
    """One capture an archive's index lists: its 14-digit timestamp, the URL as archived, the
    archived HTTP status (None when the index has none) and, for the availability API, the
    snapshot URL it gave."""

    timestamp: str
    url: str
    status: int | None
    snapshot_url: str | None = None

    @property
    def time(self) -> dt.datetime:
        return dt.datetime.strptime(self.timestamp, TS_FORMAT).replace(tzinfo=dt.UTC)


def timestamp14(when: dt.datetime) -> str:
    """The archive form of a time: ``YYYYMMDDhhmmss`` in UTC."""
    return when.astimezone(dt.UTC).strftime(TS_FORMAT)


def query_url(archive: ArchiveSettings, url: str, ref: dt.datetime, window: dt.timedelta
              ) -> str:
    """The index query for the captures of ``url`` closest to ``ref`` inside the window."""
    q = quote(url, safe="")
    closest = timestamp14(ref)
    lo, hi = timestamp14(ref - window), timestamp14(ref + window)
    n = archive.max_candidates
    if archive.api == "pywb":
        return (f"{archive.url}/cdx?url={q}&output=json&sort=closest&closest={closest}"
                f"&from={lo}&to={hi}&limit={n}")
    if archive.api == "wayback":
        return (f"{archive.url}/cdx/search/cdx?url={q}&output=json&sort=closest"
                f"&closest={closest}&from={lo}&to={hi}&limit={n}")
    return f"{archive.url}/wayback/available?url={q}&timestamp={closest}"


def _status(value: object) -> int | None:
    text = str(value).strip() if value is not None else ""
    return int(text) if text.isdigit() and 100 <= int(text) <= 599 else None


def _timestamp(value: object) -> str | None:
    text = str(value or "").strip()
    if not text.isdigit() or not 4 <= len(text) <= 14:
        return None
    text = text.ljust(14, "0")  # a shorter timestamp names the start of its period
    try:
        dt.datetime.strptime(text, TS_FORMAT)
    except ValueError:
        return None
    return text


def parse_index(api: str, body: bytes) -> list[Candidate]:
    """The candidates in an index answer; ``ValueError`` (with the reason) when unreadable."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"index answer is not UTF-8: {exc}") from exc
    rows: list[dict] = []
    try:
        if api == "pywb":
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
            rows = [{"timestamp": r.get("timestamp"), "url": r.get("url"),
                     "status": r.get("status")} for r in rows]
        elif api == "wayback":
            data = json.loads(text) if text.strip() else []
            if not isinstance(data, list) or not all(isinstance(r, list) for r in data):
                raise ValueError("expected a JSON array of rows")
            if data:
                names = data[0]
                rows = [dict(zip(names, r, strict=False)) for r in data[1:]]
                rows = [{"timestamp": r.get("timestamp"), "url": r.get("original"),
                         "status": r.get("statuscode")} for r in rows]
        else:
            data = json.loads(text)
            if not isinstance(data, dict):
                raise ValueError("expected a JSON object")
            snap = (data.get("archived_snapshots") or {}).get("closest")
            if isinstance(snap, dict) and snap.get("available", True):
                rows = [{"timestamp": snap.get("timestamp"), "url": data.get("url"),
                         "status": snap.get("status"), "snapshot_url": snap.get("url")}]
    except json.JSONDecodeError as exc:
        raise ValueError(f"index answer is not JSON: {exc}") from exc
    except AttributeError as exc:
        raise ValueError(f"unexpected index answer shape: {exc}") from exc
    out = []
    for r in rows:
        ts = _timestamp(r.get("timestamp"))
        if ts is None or not isinstance(r.get("url"), str):
            continue
        out.append(Candidate(ts, r["url"], _status(r.get("status")), r.get("snapshot_url")))
    return out


def choose(cands: list[Candidate], ref: dt.datetime, window: dt.timedelta
           ) -> Candidate | None:
    """The closest capture at or before ``ref`` inside the window, else the closest after it;
    captures without a numeric status are never chosen. Ties: the later timestamp before,
    the earlier after (the closest), then the URL, so the choice is deterministic."""
    usable = [c for c in cands if c.status is not None and abs(c.time - ref) <= window]
    before = [c for c in usable if c.time <= ref]
    if before:
        return max(before, key=lambda c: (c.time, c.url))
    after = [c for c in usable if c.time > ref]
    return min(after, key=lambda c: (c.time, c.url)) if after else None


def memento_url(archive: ArchiveSettings, cand: Candidate) -> str:
    """The raw (``id_``) replay URL of a candidate: the archived bytes, not rewritten."""
    if archive.api == "pywb":
        return f"{archive.url}/{cand.timestamp}id_/{cand.url}"
    if archive.api == "wayback":
        return f"{archive.url}/web/{cand.timestamp}id_/{cand.url}"
    snap = cand.snapshot_url or f"https://web.archive.org/web/{cand.timestamp}/{cand.url}"
    m = _TS_IN_URL.search(snap)
    if m is None:
        return snap
    return snap[:m.start()] + f"/{m.group(1)}id_/" + snap[m.end():]


_REASONS = {200: "OK", 201: "Created", 204: "No Content", 301: "Moved Permanently",
            302: "Found", 303: "See Other", 307: "Temporary Redirect",
            308: "Permanent Redirect", 400: "Bad Request", 401: "Unauthorized",
            403: "Forbidden", 404: "Not Found", 410: "Gone", 451: "Unavailable For Legal Reasons",
            500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable"}


def status_line(status: int) -> str:
    """An HTTP status line for an archived status (the reason phrase is informational)."""
    return f"{status} {_REASONS.get(status, '')}".strip()


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
                           total_timeout=s.total_timeout_seconds, max_body=s.max_body_bytes)
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

    def _get_with_retries(self, url: str, row: dict, purpose: str, hop: int
                          ) -> tuple[Attempt, int]:
        """GET with the live crawl's bounded retries; the last attempt and its number."""
        for attempt in range(1, self.s.max_retries + 2):
            att = self._get(url)
            retryable = att.status in RETRY_STATUSES or att.outcome == "connection_reset"
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

    def _failed(self, att: Attempt) -> str | None:
        """Why an answer is no usable answer (None when it is one)."""
        if att.exchange is None:
            return f"{att.outcome}: {att.detail or ''}".strip()
        if att.status in RETRY_STATUSES:
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
        att, n = self._get_with_retries(murl, row, purpose, hop)
        for _ in range(self.s.max_redirects):
            # the archive's own redirect to the exact memento (not an archived redirect)
            if not (att.exchange and att.status and 300 <= att.status < 400 and att.location
                    and not 300 <= pick.status < 400):
                break
            murl = urljoin(murl, att.location)
            att, n = self._get_with_retries(murl, row, purpose, hop)
        why = self._failed(att)
        if why is None and att.status is not None and att.status >= 500:
            why = f"replay answered HTTP {att.status}"
        if why is not None:
            self._row(att, row, purpose, hop, n, "archive_error", f"memento {murl}: {why}",
                      key=key)
            return None
        ex = att.exchange
        headers = [("X-Archive-Orig-Transfer-Encoding", v) if k.lower() == "transfer-encoding"
                   else (k, v) for k, v in ex.response_headers]
        location = next((v for k, v in ex.response_headers if k.lower() == "location"), "")
        when = pick.time
        m = _TS_IN_URL.search(murl)
        if m is not None:
            when = dt.datetime.strptime(m.group(1), TS_FORMAT).replace(tzinfo=dt.UTC)
        where = self.writers[archive.name].write_memento(Memento(
            url=target, memento_time=when, status_line=status_line(pick.status),
            headers=headers, protocol=ex.protocol, body=ex.body, archive=archive.name,
            archive_url=archive.url, memento_url=murl, archive_status=pick.status,
            replay_status=att.status, fetched_at=att.started_at, truncated=ex.truncated))
        self._row(att, row, purpose, hop, n, "archive_fetched",
                  f"memento {timestamp14(when)} (archived status {pick.status}, replay "
                  f"{att.status}); index {query}", where=where, key=key)
        return location


def wanted(plan_rows: pa.Table) -> list[dict]:
    """The planned pages still without a readable capture inside the reference window."""
    return [r for r in plan_rows.to_pylist() if not r["has_reference_capture"]
            and r["reference_time"] is not None]
