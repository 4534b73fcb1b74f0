"""Public web archives: how to ask one for the captures of a URL, and how to read its answer.

Three index APIs are spoken: the pywb / OpenWayback CDX server API
(``sort=closest&closest=<ts>``, one JSON object per line), the Wayback Machine's CDX API (a
JSON array of rows, the first one naming the fields) and its availability API (one
``closest`` snapshot). :func:`query_url` builds the question, :func:`parse_index` reads the
answer into :class:`Candidate` rows, :func:`choose` keeps the closest capture at or before the
reference time, else the closest after it, inside the window (a capture without a numeric
status is never chosen), and :func:`memento_url` names the capture's raw (``id_``) bytes.

Pure functions, no network: the capture room's archive source
(:mod:`citeaudit.archive.capture.from_archives`) sends the requests, through the live crawl's
politeness, and writes what it copies into WARC.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from urllib.parse import quote

from citeaudit.config import ArchiveSettings

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


def memento_time(url: str) -> dt.datetime | None:
    """The time a memento URL names (its ``/<14 digits>[xx_]/`` segment), or None."""
    m = _TS_IN_URL.search(url)
    if m is None:
        return None
    return dt.datetime.strptime(m.group(1), TS_FORMAT).replace(tzinfo=dt.UTC)


# --- Memento (RFC 7089): TimeGates and aggregators ------------------------------------------

def timegate_url(archive: ArchiveSettings, url: str) -> str:
    """The TimeGate of ``url`` at a ``memento`` archive: ``<archive.url>/<original URL>`` (the
    form the Internet Archive, pywb and the Memento aggregators take)."""
    return f"{archive.url}/{url}"


def http_datetime(when: dt.datetime) -> str:
    """An RFC 1123 date (``Accept-Datetime``, ``Memento-Datetime``): ``Thu, 02 Mar 2023
    12:00:00 GMT``."""
    import email.utils

    return email.utils.format_datetime(when.astimezone(dt.UTC), usegmt=True)


def parse_http_datetime(value: str | None) -> dt.datetime | None:
    """A ``Memento-Datetime`` value as a UTC datetime, or None when it is not an HTTP date."""
    import email.utils

    if not value:
        return None
    try:
        when = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return when.replace(tzinfo=dt.UTC) if when.tzinfo is None else when.astimezone(dt.UTC)


_LINK = re.compile(r"<([^>]*)>\s*((?:;\s*[^;,]+)*)")
_REL = re.compile(r"""rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))""", re.I)


def link_relations(header: str | None) -> dict[str, str]:
    """The first URL of each relation type in an HTTP ``Link`` header (RFC 8288): e.g.
    ``{"original": ..., "timemap": ..., "memento": ...}`` (a link with several types, ``rel="first
    memento"``, counts for each)."""
    out: dict[str, str] = {}
    for m in _LINK.finditer(header or ""):
        rel = _REL.search(m.group(2) or "")
        if rel is None:
            continue
        for kind in (rel.group(1) or rel.group(2) or "").split():
            out.setdefault(kind.lower(), m.group(1).strip())
    return out


def raw_memento_url(url: str) -> str:
    """The raw (``id_``) form of a memento URL whose path has a Wayback-style ``/<14 digits>/``
    (or ``/<14 digits>xx_/``) segment: the archived bytes, not a rewritten replay. Other
    memento URLs are returned as they are."""
    m = _TS_IN_URL.search(url)
    if m is None:
        return url
    return url[:m.start()] + f"/{m.group(1)}id_/" + url[m.end():]
