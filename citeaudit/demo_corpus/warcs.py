"""WARC files of the demo crawl, written record by record with warcio (never buffered whole).

One folder per crawl date, ``crawl-<n>.warc.gz`` files rolled at a size limit, each starting
with a ``warcinfo`` record. Every fetch is a ``response`` (or, when the payload is identical to
an earlier intact capture of the same URL, a ``revisit`` with the identical-payload-digest
profile, ``WARC-Refers-To-Target-URI``/``-Date``/``WARC-Refers-To`` and the original's payload
digest) followed by its ``request`` with ``WARC-Concurrent-To``. Record ids and dates are
derived from the seed, so two runs write identical bytes.

Two records are deliberately broken: one response whose block is shorter than its
``Content-Length`` (written by hand as its own gzip member, since warcio always fixes lengths)
and one response cut at a size limit and marked ``WARC-Truncated: length``.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path
from urllib.parse import urlsplit

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from citeaudit.demo_corpus import crawl, pages
from citeaudit.demo_corpus.crawl import Fetch
from citeaudit.demo_corpus.world import (
    KbDoc,
    WebSource,
    World,
    kb_doc,
    rng_for,
    stable_hex,
    stable_uuid,
    web_source,
)

USER_AGENT = "Mozilla/5.0 (compatible; citeaudit-archiver/1.0; +https://citeaudit.example/bot)"
SOFTWARE = "citeaudit-demo-crawler/1.0 (warcio)"
REVISIT_PROFILE = "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"
REASONS = {200: "OK", 301: "Moved Permanently", 302: "Found", 404: "Not Found", 410: "Gone",
           500: "Internal Server Error"}
SERVERS = ("nginx/1.24.0", "Apache/2.4.58 (Ubuntu)", "cloudflare", "openresty",
           "Microsoft-IIS/10.0")
WARC_TRUNCATE_AT = 6000  # bytes of payload kept by the size-limited capture


def _urn(seed: int, *parts: object) -> str:
    return f"<urn:uuid:{stable_uuid(seed, *parts)}>"


def record_id(seed: int, url: str, crawl_idx: int, retry: int, kind: str) -> str:
    """WARC-Record-ID of the record of ``kind`` for a fetch: derived, so revisits can cite it."""
    return _urn(seed, "rec", url, crawl_idx, retry, kind)


def sha1_b32(data: bytes) -> str:
    """``sha1:<base32>``, the digest form WARC headers use."""
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def warc_date(ts: datetime) -> str:
    """WARC/1.0 date: ``YYYY-MM-DDThh:mm:ssZ``."""
    return ts.strftime("%Y-%m-%dT%H:%M:%SZ")


def http_date(ts: datetime) -> str:
    """RFC 7231 HTTP-date of a naive UTC datetime."""
    return format_datetime(ts.replace(tzinfo=UTC), usegmt=True)


def _host_ip(host: str) -> str:
    h = int(hashlib.sha256(host.encode()).hexdigest()[:4], 16)
    return f"{(203, 198)[h & 1]}.{(0, 51)[h & 1]}.{(113, 100)[h & 1]}.{h % 250 + 2}"


def _server(host: str) -> str:
    return SERVERS[int(hashlib.sha256(host.encode()).hexdigest()[:4], 16) % len(SERVERS)]


def _chunk(body: bytes, rng) -> bytes:
    out = io.BytesIO()
    pos = 0
    while pos < len(body):
        n = min(len(body) - pos, rng.randint(2000, 9000))
        out.write(f"{n:x}\r\n".encode() + body[pos:pos + n] + b"\r\n")
        pos += n
    out.write(b"0\r\n\r\n")
    return out.getvalue()


def _error_body(status: int, url: str) -> bytes:
    reason = REASONS[status]
    return (f"<!DOCTYPE html>\n<html><head><title>{status} {reason}</title></head>\n<body>\n"
            f"<h1>{status} {reason}</h1>\n<p>The requested URL {urlsplit(url).path} "
            f"{'has moved' if status in (301, 302) else 'could not be served'}.</p>\n"
            "</body></html>\n").encode()


@dataclass
class FileStats:
    """Record counts of one WARC file (for ground truth)."""

    file: str
    records: Counter = field(default_factory=Counter)


class RollingWriter:
    """Writes one crawl date's records into ``crawl-<n>.warc.gz`` files of bounded size."""

    def __init__(self, world: World, folder: Path, root: Path, crawl_idx: int,
                 crawl_date: str, max_bytes: int) -> None:
        self.world = world
        self.folder = folder
        self.root = root
        self.crawl_idx = crawl_idx
        self.crawl_date = crawl_date
        self.max_bytes = max_bytes
        self.n = -1
        self.fh = None
        self.writer: WARCWriter | None = None
        self.files: list[FileStats] = []
        self.statuses: Counter = Counter()
        self.warcinfo_id = ""
        folder.mkdir(parents=True, exist_ok=True)
        self._open()

    @property
    def current(self) -> FileStats:
        return self.files[-1]

    def _open(self) -> None:
        self.n += 1
        name = f"crawl-{self.n}.warc.gz"
        path = self.folder / name
        self.fh = open(path, "wb")  # noqa: SIM115 - closed in _close
        self.writer = WARCWriter(self.fh, gzip=True, warc_version="1.0")
        self.files.append(FileStats(path.relative_to(self.root).as_posix()))
        self.warcinfo_id = _urn(self.world.seed, "warcinfo", self.crawl_date, self.n)
        info = (
            f"software: {SOFTWARE}\r\nformat: WARC File Format 1.0\r\n"
            "conformsTo: http://iipc.github.io/warc-specifications/specifications/"
            "warc-format/warc-1.0/\r\n"
            f"isPartOf: citeaudit-demo-seed{self.world.seed}\r\n"
            f"description: Archive of pages cited by the demo query panel, crawl of "
            f"{self.crawl_date}\r\nrobots: obey\r\n"
            f"http-header-user-agent: {USER_AGENT}\r\n"
        ).encode()
        when = crawl.crawl_day_start(self.world, self.crawl_idx)
        record = self.writer.create_warc_record(
            "", "warcinfo", payload=io.BytesIO(info), length=len(info),
            warc_content_type="application/warc-fields",
            warc_headers_dict={
                "WARC-Type": "warcinfo",
                "WARC-Record-ID": self.warcinfo_id,
                "WARC-Date": warc_date(when),
                "WARC-Filename": name,
            },
        )
        self.writer.write_record(record)
        self.current.records["warcinfo"] += 1

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None

    def maybe_roll(self) -> None:
        if self.fh is not None and self.fh.tell() >= self.max_bytes:
            self.close()
            self._open()

    # ---------------------------------------------------------------- records
    def _rec_id(self, url: str, fetch: Fetch, kind: str) -> str:
        return record_id(self.world.seed, url, self.crawl_idx, fetch.retry, kind)

    def _request(self, fetch: Fetch, resp_id: str):
        parts = urlsplit(fetch.url)
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        headers = [
            ("Host", parts.netloc),
            ("User-Agent", USER_AGENT),
            ("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
            ("Accept-Language", "en-US,en;q=0.9"),
            ("Accept-Encoding", "gzip, deflate"),
            ("Connection", "keep-alive"),
        ]
        http = StatusAndHeaders(f"GET {target} HTTP/1.1", headers, is_http_request=True)
        return self.writer.create_warc_record(
            fetch.url, "request", http_headers=http,
            warc_headers_dict={
                "WARC-Type": "request",
                "WARC-Record-ID": self._rec_id(fetch.url, fetch, "request"),
                "WARC-Date": warc_date(fetch.when),
                "WARC-Concurrent-To": resp_id,
                "WARC-Warcinfo-ID": self.warcinfo_id,
            },
        )

    def _response_headers(self, fetch: Fetch, host: str, body_len: int | None, ctype: str,
                          extra: Sequence[tuple[str, str]] = ()) -> StatusAndHeaders:
        rng = rng_for(self.world.seed, "hdr", fetch.url, self.crawl_idx, fetch.retry)
        headers = [("Date", http_date(fetch.when)), ("Server", _server(host)),
                   ("Content-Type", ctype)]
        if body_len is not None:
            headers.append(("Content-Length", str(body_len)))
        headers.extend(extra)
        if rng.random() < 0.3:
            headers.append(("Set-Cookie", f"sid={rng.getrandbits(64):016x}; Path=/; HttpOnly; "
                                          "SameSite=Lax"))
        headers.append(("X-Request-Id", f"{rng.getrandbits(96):024x}"))
        return StatusAndHeaders(f"{fetch.status} {REASONS[fetch.status]}", headers,
                                protocol="HTTP/1.1")

    def write_exchange(self, fetch: Fetch, host: str, body: bytes, ctype: str,
                       extra: Sequence[tuple[str, str]] = (), chunked: bool = False,
                       revisit_of: tuple[str, datetime, str] | None = None,
                       mode: str = "normal") -> None:
        """Write one response (or revisit) and its request.

        ``revisit_of`` is ``(record id, date, payload digest)`` of the original capture.
        ``mode`` is ``normal``, ``short`` (block shorter than Content-Length, hand-written) or
        ``warc_truncated`` (payload cut, ``WARC-Truncated: length``).
        """
        assert self.writer is not None
        rng = rng_for(self.world.seed, "body", fetch.url, self.crawl_idx, fetch.retry)
        resp_id = self._rec_id(fetch.url, fetch, "response")
        extra = list(extra)
        if chunked:
            http = self._response_headers(fetch, host, None, ctype,
                                          extra + [("Transfer-Encoding", "chunked")])
            wire = _chunk(body, rng)
        else:
            http = self._response_headers(fetch, host, len(body), ctype, extra)
            wire = body
        warc_headers = {
            "WARC-Type": "revisit" if revisit_of else "response",
            "WARC-Record-ID": resp_id,
            "WARC-Date": warc_date(fetch.when),
            "WARC-Target-URI": fetch.url,
            "WARC-IP-Address": _host_ip(host),
            "WARC-Warcinfo-ID": self.warcinfo_id,
        }
        if revisit_of:
            orig_id, orig_date, digest = revisit_of
            record = self.writer.create_revisit_record(
                fetch.url, digest, fetch.url, warc_date(orig_date), http_headers=http,
                warc_headers_dict=warc_headers,
            )
            record.rec_headers.replace_header("WARC-Profile", REVISIT_PROFILE)
            record.rec_headers.add_header("WARC-Refers-To", orig_id)
            self.writer.write_record(record)
            self.current.records["revisit"] += 1
        elif mode == "short":
            # the crawler died while writing this record: the file ends here, unfinished and
            # without the request record, and the restarted crawler opens the next file
            self._write_short(warc_headers, http, wire)
            self.close()
            self._open()
            return
        else:
            stored = wire
            if mode == "warc_truncated":
                stored = wire[:WARC_TRUNCATE_AT]
                warc_headers["WARC-Truncated"] = "length"
            record = self.writer.create_warc_record(
                fetch.url, "response", payload=io.BytesIO(stored), length=len(stored),
                http_headers=http, warc_headers_dict=warc_headers,
            )
            self.writer.write_record(record)
            self.current.records["response"] += 1
            self.statuses[str(fetch.status)] += 1
        self.writer.write_record(self._request(fetch, resp_id))
        self.current.records["request"] += 1

    def _write_short(self, warc_headers: dict, http: StatusAndHeaders, body: bytes) -> None:
        """A response record whose block ends before its declared Content-Length."""
        head = http.to_bytes()
        block = head + body
        lines = [("WARC/1.0", None)] + list(warc_headers.items()) + [
            ("WARC-Payload-Digest", sha1_b32(body)),
            ("WARC-Block-Digest", sha1_b32(block)),
            ("Content-Type", "application/http; msgtype=response"),
            ("Content-Length", str(len(block))),
        ]
        text = "".join(f"{k}\r\n" if v is None else f"{k}: {v}\r\n" for k, v in lines) + "\r\n"
        kept = block[: len(head) + len(body) * 3 // 5]
        self.fh.write(gzip.compress(text.encode() + kept, compresslevel=9, mtime=0))
        self.current.records["response"] += 1
        self.statuses[str(http.get_statuscode())] += 1


# ----------------------------------------------------------------------------------- crawl
@dataclass
class CrawlResult:
    """What the crawl wrote, for ground truth and the summary."""

    files: list[FileStats] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)
    truncated: list[dict] = field(default_factory=list)
    planted: Counter = field(default_factory=Counter)


def _cited(cited: list[bytearray], i: int) -> list[bool]:
    return [bool(day[i]) for day in cited]


def pick_truncated(world: World, cited_web: list[bytearray]) -> tuple[int, int]:
    """Choose the two sources whose first capture is broken: (short block, WARC-Truncated).

    Prefers plain ``ok`` pages captured exactly once (so no revisit points at a broken
    record) and cited on the first observation day; returns -1 when none qualifies.
    """
    found: list[int] = []
    fallback: list[int] = []
    n_crawls = world.days + 2
    for g in range(world.scale.n_web):
        mask = _cited(cited_web, g)
        if not any(mask):
            continue
        src = web_source(world, g)
        if src.plan != "ok" or src.chain or src.content_encoding or src.chunked:
            continue
        visits = [c for c in range(n_crawls) if crawl.participates(world, "web", g, c, mask)]
        if not visits:
            continue
        if len(visits) == 1 and mask[0]:
            found.append(g)
        elif len(fallback) < 2:
            fallback.append(g)
        if len(found) == 2:
            break
    picks = (found + fallback + [-1, -1])[:2]
    return picks[0], picks[1]


def _web_body(world: World, src: WebSource, version: int) -> tuple[bytes, str, list]:
    """Payload bytes (after content coding), content type and extra headers of a 200 page."""
    html = pages.web_page_html(world, src, version)
    ctype = f"text/html; charset={src.charset}"
    extra = [("Last-Modified", http_date(datetime.combine(src.published, datetime.min.time()))),
             ("ETag", f'"{stable_hex(world.seed, "etag", src.g, version, n=16)}"'),
             ("Cache-Control", "max-age=600"), ("Vary", "Accept-Encoding")]
    if src.content_encoding == "gzip":
        html = gzip.compress(html, compresslevel=6, mtime=0)
        extra.append(("Content-Encoding", "gzip"))
    return html, ctype, extra


def crawl_all(world: World, root: Path, crawl_dates: list[str], cited_web: list[bytearray],
              cited_kb: list[bytearray], max_bytes: int,
              tick: Callable[[int], None] | None = None) -> CrawlResult:
    """Write every crawl date's WARC files under ``root/warc/<date>/``."""
    result = CrawlResult()
    short_g, trunc_g = pick_truncated(world, cited_web)
    n_crawls = world.days + 2
    broken_first = {
        g: min(c for c in range(n_crawls)
               if crawl.participates(world, "web", g, c, _cited(cited_web, g)))
        for g in (short_g, trunc_g) if g >= 0
    }
    for c in range(n_crawls):
        folder = root / "warc" / crawl_dates[c]
        out = RollingWriter(world, folder, root, c, crawl_dates[c], max_bytes)
        for g in range(world.scale.n_web):
            if tick and g % 512 == 0:
                tick(min(512, world.scale.n_web - g))
            mask = _cited(cited_web, g)
            if not any(mask):
                continue
            src = web_source(world, g)
            if src.plan == "never_captured":
                if c == 0:
                    result.planted["cited_never_captured"] += 1
                continue
            if not crawl.participates(world, "web", g, c, mask):
                continue
            for fetch in crawl.web_fetches(world, src, c):
                mode = "normal"
                if broken_first.get(g) == c and fetch.status == 200:
                    if g == short_g:
                        mode = "short"
                    elif g == trunc_g:
                        mode = "warc_truncated"
                _write_web_fetch(world, out, src, fetch, c, mask, mode, broken_first, result)
            out.maybe_roll()
        for k in range(world.scale.n_kb):
            if tick and k % 512 == 0:
                tick(min(512, world.scale.n_kb - k))
            mask = _cited(cited_kb, k)
            if not crawl.participates(world, "kb", k, c, mask):
                continue
            doc = kb_doc(world, k)
            for fetch in crawl.kb_fetches(world, doc, c):
                _write_kb_fetch(world, out, doc, fetch, c, mask)
            out.maybe_roll()
        out.close()
        result.files.extend(out.files)
        result.statuses.update(out.statuses)
    return result


def _original(world: World, src: WebSource, fetch: Fetch, c: int, mask: list[bool],
              broken_first: dict[int, int]) -> tuple[int, Fetch] | None:
    """Earliest intact 200 capture of the same URL and version before crawl ``c``."""
    for prev in range(c):
        if broken_first.get(src.g) == prev:
            continue  # a broken capture is never a revisit's original
        if not crawl.participates(world, "web", src.g, prev, mask):
            continue
        for f in crawl.web_fetches(world, src, prev):
            if f.status == 200 and f.url == fetch.url and f.version == fetch.version:
                return prev, f
    return None


def _write_web_fetch(world: World, out: RollingWriter, src: WebSource, fetch: Fetch, c: int,
                     mask: list[bool], mode: str, broken_first: dict[int, int],
                     result: CrawlResult) -> None:
    host = urlsplit(fetch.url).hostname or src.host
    if fetch.status != 200:
        extra = [("Location", fetch.location)] if fetch.location else []
        if fetch.status in (301, 302):
            extra.append(("Cache-Control", "max-age=3600" if fetch.status == 301 else "no-cache"))
        out.write_exchange(fetch, host, _error_body(fetch.status, fetch.url),
                           "text/html; charset=utf-8", extra)
        return
    body, ctype, extra = _web_body(world, src, fetch.version)
    revisit_of = None
    if mode == "normal" and not src.chunked:
        found = _original(world, src, fetch, c, mask, broken_first)
        if found is not None:
            prev, orig = found
            orig_id = record_id(world.seed, orig.url, prev, orig.retry, "response")
            revisit_of = (orig_id, orig.when, sha1_b32(body))
    if mode != "normal":
        result.truncated.append({"file": out.current.file, "url": fetch.url,
                                 "kind": "short_block" if mode == "short" else "warc_truncated"})
    out.write_exchange(fetch, host, body, ctype, extra, chunked=src.chunked,
                       revisit_of=revisit_of, mode=mode)


def _write_kb_fetch(world: World, out: RollingWriter, doc: KbDoc, fetch: Fetch, c: int,
                    mask: list[bool]) -> None:
    body = pages.kb_page_html(world, doc, fetch.version)
    extra = [("ETag", f'"{stable_hex(world.seed, "kbetag", doc.k, fetch.version, n=16)}"'),
             ("Cache-Control", "private, no-store")]
    revisit_of = None
    for prev in range(c):
        if crawl.participates(world, "kb", doc.k, prev, mask) and doc.version_at(prev) == \
                fetch.version:
            orig = crawl.kb_fetches(world, doc, prev)[0]
            orig_id = record_id(world.seed, orig.url, prev, 0, "response")
            revisit_of = (orig_id, orig.when, sha1_b32(body))
            break
    out.write_exchange(fetch, "kb.example-rag.internal", body, "text/html; charset=utf-8",
                       extra, revisit_of=revisit_of)
