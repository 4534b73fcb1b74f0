"""WARC/1.1 files of live captures: named, opened, rolled over and closed so no reader sees half.

Files are ``raw/warc/<crawl_date>/citeaudit-<observation_date>-<seq>.warc.gz``. A file is
written as ``<name>.<pid>.open`` (a name the capture index does not read, unique per process)
and renamed to its final name only when closed, so a crash or SIGKILL leaves at most an
invisible ``.open`` file; a later run removes the ``.open`` files of processes no longer alive.
A file rolls over to the next sequence number once it exceeds ``max_bytes``. Each file starts
with a ``warcinfo`` record (software, version, operator, robots policy); records are written
with warcio (digests computed by warcio) under one lock, so fetch threads can share a writer.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import os
import threading
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path, PurePosixPath

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from citeaudit import storage
from citeaudit.layout import FETCHED_WARC_RE
from citeaudit.parquet_io import pid_alive


def software_version() -> str:
    """citeaudit's installed version (for the warcinfo record and the User-Agent)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("citeaudit")
    except PackageNotFoundError:
        return "0+unknown"


FETCHED_RE = FETCHED_WARC_RE

RENDERED_URN = "urn:rendered-dom:"
"""Target URI prefix of a rendered-DOM ``resource`` record: ``urn:rendered-dom:<page URL>``."""


def sha1_digest(*parts: bytes) -> str:
    """``sha1:<base32>`` of the concatenated ``parts``: the WARC digest form warcio writes."""
    h = hashlib.sha1()
    for part in parts:
        h.update(part)
    return "sha1:" + base64.b32encode(h.digest()).decode("ascii")


def fetched_name(observation_date: str, seq: int, archive: str | None = None) -> str:
    """The final file name of one fetched WARC (``-archive-<name>``: copied from an archive)."""
    tail = f"-archive-{archive}" if archive else ""
    return f"citeaudit-{observation_date}-{seq:05d}{tail}.warc.gz"


def file_origin(path: Path | str) -> str:
    """The ``origin`` of a fetched WARC's rows: ``fetched`` (live) or ``archive:<name>``."""
    m = FETCHED_RE.match(PurePosixPath(str(path)).name)
    return f"archive:{m.group(3)}" if m and m.group(3) else "fetched"


def is_fetched_file(path: Path) -> bool:
    """True for a WARC this writer produced (by its name)."""
    return FETCHED_RE.match(path.name) is not None


def fetched_files(raw: Path, observation_date: str) -> list[Path]:
    """Every closed fetched WARC of one observation date, whatever day it was crawled."""
    root = storage.path(raw) / "warc"
    if not root.is_dir():
        return []
    return sorted((p for p in root.glob(f"*/citeaudit-{observation_date}-*.warc.gz")
                   if FETCHED_RE.match(p.name)), key=lambda p: (p.parent.name, p.name))



def remove_stale_open_files(folder: Path) -> list[Path]:
    """Settle ``*.open`` files left by processes that are no longer running: their complete
    records are kept under the final name (:func:`citeaudit.archive.capture.resume.salvage_warc`),
    a file with nothing but its warcinfo is removed."""
    from citeaudit.archive.capture.resume import salvage_warc

    removed = []
    for p in sorted(folder.glob("citeaudit-*.warc.gz.*.open")):
        try:
            pid = int(p.name.rsplit(".", 2)[-2])
        except ValueError:
            continue
        if pid != os.getpid() and not pid_alive(pid):
            salvage_warc(p)
            removed.append(p)
    return removed


@dataclass(frozen=True)
class Written:
    """Where one record landed: the file (relative to raw) and the record's offset and length."""

    file: str
    offset: int
    length: int
    record_id: str


@dataclass
class HttpExchange:
    """One request and its response, as sent and received (body possibly truncated)."""

    url: str
    request_line: str
    request_headers: list[tuple[str, str]]
    status_line: str
    response_headers: list[tuple[str, str]]
    protocol: str
    body: bytes
    ip_address: str | None
    fetched_at: dt.datetime
    truncated: str | None = None  # "length" when the body was cut at the size limit


@dataclass
class Memento:
    """A capture copied from a web archive: the original URL, the memento's datetime, the
    status the archive's index gives (``status_line``), the replayed headers and raw body."""

    url: str
    memento_time: dt.datetime
    status_line: str
    headers: list[tuple[str, str]]
    protocol: str
    body: bytes
    archive: str
    archive_url: str
    memento_url: str
    archive_status: int
    replay_status: int | None
    fetched_at: dt.datetime
    truncated: str | None = None


class FetchWarcWriter:
    """Writes exchanges into rolled-over WARC/1.1 files of one crawl (see module docstring)."""

    def __init__(self, raw: Path, crawl_date: str, observation_date: str, *,
                 max_bytes: int, info: dict[str, str], archive: str | None = None) -> None:
        self.raw = Path(raw)
        self.archive = archive
        self.folder = self.raw / "warc" / crawl_date
        self.observation_date = observation_date
        self.max_bytes = max_bytes
        self.info = info
        self._lock = threading.Lock()
        self._out = None
        self._writer: WARCWriter | None = None
        self._final: Path | None = None
        self._open: Path | None = None
        self._rel = ""  # the open file's final name relative to raw (each Written's file)
        self.closed_files: list[Path] = []

    def _next_seq(self) -> int:
        seqs = [int(m.group(2)) for p in self.folder.glob(
            f"citeaudit-{self.observation_date}-*.warc.gz")
            if (m := FETCHED_RE.match(p.name))]
        return max(seqs, default=0) + 1

    def _start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        remove_stale_open_files(self.folder)
        self._final = self.folder / fetched_name(self.observation_date, self._next_seq(),
                                                 self.archive)
        self._open = self._final.with_name(f"{self._final.name}.{os.getpid()}.open")
        self._rel = self._final.relative_to(self.raw).as_posix()
        self._out = open(self._open, "wb")  # noqa: SIM115 - closed in _finish
        self._writer = WARCWriter(self._out, gzip=True, warc_version="WARC/1.1")
        info = self._writer.create_warcinfo_record(self._final.name, dict(self.info))
        self._writer.write_record(info)

    def _finish(self) -> None:
        if self._out is None:
            return
        self._out.flush()
        os.fsync(self._out.fileno())
        self._out.close()
        os.replace(self._open, self._final)
        self.closed_files.append(self._final)
        self._out = self._writer = self._final = self._open = None

    def _write(self, record) -> Written:
        assert self._writer is not None and self._out is not None and self._final is not None
        offset = self._out.tell()
        self._writer.write_record(record)
        length = self._out.tell() - offset
        return Written(self._rel, offset, length,
                       record.rec_headers.get_header("WARC-Record-ID"))

    def _http_record(self, uri: str, record_type: str, body: bytes, http: StatusAndHeaders,
                     fields: dict[str, str]):
        """warcio's ``create_warc_record`` for a record with HTTP headers, its two digests
        computed here in one hashlib pass each (warcio's own digest pass costs more than the
        fetch on a fast site). The record is the same: headers in warcio's order (``fields``,
        WARC-Type, -Record-ID, -Target-URI, -Payload-Digest, -Block-Digest, then the
        Content-Type and Content-Length warcio adds when it writes it)."""
        assert self._writer is not None
        writer = self._writer
        http.compute_headers_buffer(writer.header_filter)
        headers = StatusAndHeaders("", list(fields.items()), protocol=writer.warc_version)
        headers.add_header("WARC-Type", record_type)
        headers.add_header("WARC-Record-ID", writer._make_warc_id())
        headers.add_header("WARC-Target-URI", uri)
        headers.add_header("WARC-Payload-Digest", sha1_digest(body))
        headers.add_header("WARC-Block-Digest", sha1_digest(http.headers_buff, body))
        return writer.create_warc_record(uri, record_type, payload=BytesIO(body),
                                         length=len(body), http_headers=http,
                                         warc_headers=headers)

    def write_exchange(self, ex: HttpExchange, revisit_of: tuple[str, str, str] | None = None
                       ) -> Written:
        """Write the response (or a revisit when ``revisit_of`` = (digest, uri, date) names an
        earlier capture with the same payload) and its request, linked by WARC-Concurrent-To.
        Returns where the response/revisit record landed."""
        date = ex.fetched_at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        common = {"WARC-Date": date}
        if ex.ip_address:
            common["WARC-IP-Address"] = ex.ip_address
        http = StatusAndHeaders(ex.status_line, ex.response_headers, protocol=ex.protocol)
        with self._lock:
            if self._writer is None:
                self._start()
            assert self._writer is not None
            if revisit_of is not None:
                digest, uri, refdate = revisit_of
                resp = self._writer.create_revisit_record(
                    ex.url, digest, uri, refdate, http_headers=http,
                    warc_headers_dict=dict(common))
            else:
                headers = dict(common)
                if ex.truncated:
                    headers["WARC-Truncated"] = ex.truncated
                resp = self._http_record(ex.url, "response", ex.body, http, headers)
            rid = resp.rec_headers.get_header("WARC-Record-ID")
            req_http = StatusAndHeaders(ex.request_line, ex.request_headers,
                                        is_http_request=True)
            req = self._http_record(ex.url, "request", b"", req_http,
                                    dict(common) | {"WARC-Concurrent-To": rid})
            where = self._write(resp)
            self._write(req)
            if self._out is not None and self._out.tell() >= self.max_bytes:
                self._finish()
            return where

    def write_memento(self, m: Memento) -> Written:
        """Write a capture copied from a web archive: a ``response`` record whose target URI is
        the original URL and whose WARC-Date is the memento's datetime, with the archive's
        status (from its index, not the replay's), then a ``metadata`` record naming the
        archive and the memento URL (WARC-Refers-To the response)."""
        date = m.memento_time.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        http = StatusAndHeaders(m.status_line, m.headers, protocol=m.protocol)
        headers = {"WARC-Date": date}
        if m.truncated:
            headers["WARC-Truncated"] = m.truncated
        fields = [("archive", m.archive), ("archive-url", m.archive_url),
                  ("memento-url", m.memento_url), ("memento-datetime", date),
                  ("archive-status", str(m.archive_status)),
                  ("replay-status", str(m.replay_status)),
                  ("fetched-at", m.fetched_at.astimezone(dt.UTC).strftime(
                      "%Y-%m-%dT%H:%M:%S.%fZ"))]
        body = "".join(f"{k}: {v}\r\n" for k, v in fields).encode("utf-8")
        with self._lock:
            if self._writer is None:
                self._start()
            assert self._writer is not None
            resp = self._writer.create_warc_record(
                m.url, "response", payload=BytesIO(m.body), http_headers=http,
                warc_headers_dict=headers)
            rid = resp.rec_headers.get_header("WARC-Record-ID")
            meta = self._writer.create_warc_record(
                m.url, "metadata", payload=BytesIO(body),
                warc_content_type="application/warc-fields",
                warc_headers_dict={"WARC-Date": date, "WARC-Refers-To": rid})
            where = self._write(resp)
            self._write(meta)
            if self._out is not None and self._out.tell() >= self.max_bytes:
                self._finish()
            return where

    def write_metadata(self, url: str, refers_to: str | None, fields: list[tuple[str, str]],
                       when: dt.datetime) -> Written:
        """A ``metadata`` record (``application/warc-fields``) about ``url``, e.g. naming a
        response as a soft-404 probe (WARC-Refers-To that response's record ID)."""
        date = when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        body = "".join(f"{k}: {v}\r\n" for k, v in fields).encode("utf-8")
        headers = {"WARC-Date": date}
        if refers_to:
            headers["WARC-Refers-To"] = refers_to
        with self._lock:
            if self._writer is None:
                self._start()
            assert self._writer is not None
            meta = self._writer.create_warc_record(
                url, "metadata", payload=BytesIO(body),
                warc_content_type="application/warc-fields", warc_headers_dict=headers)
            return self._write(meta)

    def write_rendered(self, url: str, html: str, fetched_at: dt.datetime,
                       concurrent_to: str | None, fields: list[tuple[str, str]]) -> Written:
        """The DOM a browser rendered from the response of ``url`` fetched at ``fetched_at``:
        a ``resource`` record with target URI ``urn:rendered-dom:<url>`` (:data:`RENDERED_URN`),
        ``text/html; charset=utf-8``, the *same* WARC-Date as that response (so the alignment
        finds the rendering of exactly the capture a citation is aligned with) and
        WARC-Concurrent-To its record ID; a ``metadata`` record (``fields``: when it was
        rendered, by what, how many sub-requests) refers to it."""
        date = fetched_at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        headers = {"WARC-Date": date}
        if concurrent_to:
            headers["WARC-Concurrent-To"] = concurrent_to
        body = "".join(f"{k}: {v}\r\n" for k, v in fields).encode("utf-8")
        with self._lock:
            if self._writer is None:
                self._start()
            assert self._writer is not None
            res = self._writer.create_warc_record(
                RENDERED_URN + url, "resource", payload=BytesIO(html.encode("utf-8")),
                warc_content_type="text/html; charset=utf-8", warc_headers_dict=headers)
            rid = res.rec_headers.get_header("WARC-Record-ID")
            meta = self._writer.create_warc_record(
                RENDERED_URN + url, "metadata", payload=BytesIO(body),
                warc_content_type="application/warc-fields",
                warc_headers_dict={"WARC-Date": date, "WARC-Refers-To": rid})
            where = self._write(res)
            self._write(meta)
            if self._out is not None and self._out.tell() >= self.max_bytes:
                self._finish()
            return where

    def close(self) -> list[Path]:
        """Close (and rename) the open file; returns every file this writer closed."""
        with self._lock:
            self._finish()
        return list(self.closed_files)


def default_info(operator: str | None, contact: str | None, user_agent: str, via: str | None
                 ) -> dict[str, str]:
    """The warcinfo fields of a fetched file."""
    info = {
        "software": f"citeaudit/{software_version()} (warcio)",
        "format": "WARC File Format 1.1",
        "conformsTo": "https://iipc.github.io/warc-specifications/specifications/"
                      "warc-format/warc-1.1/",
        "robots": "obey (RFC 9309, protego); unreachable robots.txt = disallow all",
        "http-header-user-agent": user_agent,
    }
    if operator:
        info["operator"] = operator
    if contact:
        info["contact"] = contact
    if via:
        info["via"] = f"every request sent to {via}; target URIs are the cited URLs"
    return info
