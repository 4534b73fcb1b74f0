"""The capture index: WARC/ARC files -> one Arrow row per capture, and pywb-style CDXJ.

Why: every citation check downstream needs to know what an archive holds for a URL (status,
redirect target, content type, payload hash, when) and where the record is (file, offset,
length) so it can be replayed. This module builds that index with the same offsets, lengths,
SURT keys and digests as pywb / cdxj-indexer, so a row can be handed to a pywb-compatible
replayer, and adds what an audit needs on top: a SHA-256 of every payload, whether the
declared payload digest is right, truncation, and an ``error`` for anything wrong with the
bytes (a bad file never stops a batch).

Pure functions, no Dagster. Reading is streamed (flat memory, payloads hashed in 64 KiB
pieces) by one of two readers in :mod:`citeaudit.warc_readers`: FastWARC where it can prove
its offsets right, warcio otherwise (ARC files, damaged files). Both give identical rows.
:func:`index_paths` runs files in parallel processes and also cuts a large gzip-per-record
``.warc.gz`` into byte ranges at gzip member boundaries, one per worker, read by FastWARC;
the ranges' rows are accepted only if they are provably those of a whole-file read (every
cut confirmed as a record boundary by the sequential read, no request/response pair across
a cut), else the file is indexed whole.

What gets a row: ``response``, ``revisit`` and ``resource`` records (not
``application/warc-fields`` resources) and ARC records, as pywb and cdxj-indexer index them;
not ``warcinfo`` or ``request`` records, nor (unlike pywb and cdxj-indexer) ``metadata``
records; ``all_records=True`` indexes every record. Plus a row for each unreadable stretch of
bytes. A POST/PUT request is not indexed itself but, as in pywb, its body goes into the
urlkey of the response it belongs to (``org,httpbin)/post?__wb_method=post&foo=bar``).

Error codes (``;``-joined when several apply; a wrong digest is not one, that is
``digest_verified=False``):

* ``truncated_record``: the file (or the record's gzip member) ends before Content-Length
  bytes; ``truncated`` is True. (A ``WARC-Truncated`` header alone sets ``truncated``.)
* ``content_length_mismatch``: a stray line follows Content-Length bytes (length wrong).
* ``invalid_content_length``: missing, negative or non-numeric Content-Length.
* ``whole_file_gzip``: the record shares a gzip member with other records; ``offset`` and
  ``length`` are the member's.
* ``misaligned_gzip_member``: the record straddles gzip members or starts inside one.
* ``corrupt_gzip_member``: deflate data is corrupt; reading resumes at the next member.
* ``invalid_warc_date``: WARC-Date missing or not a date (no ``timestamp``).
* ``missing_http_status`` / ``arc_missing_status``: an http(s) response without a status.
* ``unreadable_record: <detail>``: bytes that do not parse as a record (one row per
  stretch, up to the next record found) or HTTP headers over 1 MiB.
* ``unreadable_file: <detail>``, ``unsupported_compression: <lz4|zstd|bzip2|xz>``,
  ``fastwarc_refused: <reason>`` (only with ``reader="fastwarc"``): one row for the file.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import json
import logging
import os
import re
import sys
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import unquote_plus, urlencode

import pyarrow as pa

from citeaudit.warc_readers import (
    BLOCK_SIZE,
    FastwarcRefused,
    Slot,
    fastwarc_slots,
    gzip_record_cuts,
    sniff_compression,
    warcio_slots,
)

__all__ = [
    "CAPTURE_SCHEMA",
    "CDXJ_SKIPPED_ERRORS",
    "index_file",
    "index_paths",
    "iter_archive_files",
    "iter_index_paths",
    "register_cli",
    "to_cdxj_lines",
]

CAPTURE_SCHEMA = pa.schema(
    [
        pa.field("file", pa.string(), nullable=False),
        pa.field("offset", pa.int64()),
        pa.field("length", pa.int64()),
        pa.field("record_type", pa.string()),
        pa.field("target_uri", pa.string()),
        pa.field("urlkey", pa.string()),
        pa.field("capture_time", pa.timestamp("us", tz="UTC")),
        pa.field("timestamp", pa.string()),
        pa.field("http_status", pa.int32()),
        pa.field("redirect_location", pa.string()),
        pa.field("mime", pa.string()),
        pa.field("declared_payload_digest", pa.string()),
        pa.field("digest_verified", pa.bool_()),
        pa.field("payload_sha256", pa.string()),
        pa.field("payload_length", pa.int64()),
        pa.field("cdx_digest", pa.string()),
        pa.field("refers_to_uri", pa.string()),
        pa.field("refers_to_date", pa.string()),
        pa.field("record_id", pa.string()),
        pa.field("warc_date_raw", pa.string()),
        pa.field("truncated", pa.bool_()),
        pa.field("error", pa.string()),
    ]
)
"""One row per capture. ``cdx_digest`` (beyond the brief) is the digest pywb puts in its
index: the declared WARC-Payload-Digest, or for records without one (ARC, some resources) a
``sha1:`` base32 digest computed over the payload, as cdxj-indexer does. ``error`` holds one
or more codes joined by ``;``."""

_COLUMNS = CAPTURE_SCHEMA.names

READERS = ("auto", "warcio", "fastwarc")
ARCHIVE_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz")

CDXJ_SKIPPED_ERRORS = (
    "whole_file_gzip",
    "misaligned_gzip_member",
    "corrupt_gzip_member",
    "invalid_warc_date",
    "unreadable_record",
    "unreadable_file",
    "unsupported_compression",
    "fastwarc_refused",
)
"""Rows with one of these error codes are left out of CDXJ: pywb could not replay them from
their (offset, length), or they have no timestamp. Truncated records, a wrong
Content-Length or a missing status are still indexed, as pywb/cdxj-indexer do."""

POST_BODY_CAP = 1 << 20
"""Bytes of a POST/PUT body read to build its ``__wb_method=post`` key (pywb reads it all)."""

MAX_POST_QUERY = 4096
"""pywb/cdxj-indexer cut the body query to this many characters."""

MAX_HTTP_HEADER_BYTES = 1 << 20
"""Longer HTTP header blocks are reported as unreadable instead of being held in memory."""

SPLIT_MIN_BYTES = 32 << 20
""":func:`index_paths` splits ``.warc.gz`` files larger than this between its workers."""

_log = logging.getLogger(__name__)

_HTTP_SCHEMES = ("http:", "https:")
_NO_COMPUTED_DIGEST = ("warcinfo", "revisit")  # warcio's NO_PAYLOAD_DIGEST_TYPES
_RE_MIME_SPLIT = re.compile(r"[;\s]")
_RE_DATE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})"
    r"(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?"
    r"\s*([Zz]|[+-]\d{2}(?::?\d{2})?)?$"
)


# ---------------------------------------------------------------------------------------------
# small pure helpers
# ---------------------------------------------------------------------------------------------


def clean_target_uri(uri: str | None) -> str | None:
    """Strip wget 1.19's ``<...>`` and percent-encode spaces, as warcio/pywb do."""
    if uri is None:
        return None
    if uri.startswith("<") and uri.endswith(">"):
        uri = uri[1:-1]
    if " " in uri:
        uri = uri.replace(" ", "%20")
    return uri


_URLKEY_CACHE: dict[str, str] = {}


def url_to_urlkey(url: str) -> str:
    """SURT key of a URL exactly as pywb/cdxj-indexer compute it (``surt.surt``).

    surt is the single most expensive step per record (~40 us), so keys are memoised
    (revisits and recrawls repeat URLs); the cache is emptied past 50,000 entries.
    """
    key = _URLKEY_CACHE.get(url)
    if key is None:
        import surt

        try:
            key = surt.surt(url)
        except Exception:  # cdxj-indexer falls back to the URL itself
            key = url
        if len(_URLKEY_CACHE) >= 50_000:
            _URLKEY_CACHE.clear()
        _URLKEY_CACHE[url] = key
    return key


_DATE_CACHE: dict[str, tuple[datetime | None, str | None]] = {}


def _capture_time(value: str | None) -> tuple[datetime | None, str | None]:
    """``(capture_time, 14-digit timestamp)`` of a WARC-Date, memoised (dates repeat)."""
    if value is None:
        return None, None
    hit = _DATE_CACHE.get(value)
    if hit is None:
        when = parse_warc_date(value)
        hit = (when, when.strftime("%Y%m%d%H%M%S") if when else None)
        if len(_DATE_CACHE) >= 10_000:
            _DATE_CACHE.clear()
        _DATE_CACHE[value] = hit
    return hit


def parse_warc_date(value: str | None) -> datetime | None:
    """Parse a WARC-Date (W3C-DTF, optional fraction and zone) into an aware UTC datetime.

    Returns None for a missing or impossible date (ClueWeb's ``2008-10-294T05:21:46-0700``).
    A date without a zone is taken as UTC, as pywb does.
    """
    if not value:
        return None
    match = _RE_DATE.match(value.strip())
    if not match:
        return None
    year, month, day, hour, minute, second, frac, zone = match.groups()
    try:
        micro = int((frac or "0")[:6].ljust(6, "0"))
        moment = datetime(
            int(year), int(month), int(day), int(hour or 0), int(minute or 0),
            int(second or 0), micro, tzinfo=UTC,
        )
    except ValueError:
        return None
    if zone and zone not in ("Z", "z"):
        digits = zone[1:].replace(":", "")
        shift = timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0))
        try:
            moment = moment.replace(tzinfo=timezone(shift if zone[0] == "+" else -shift))
        except ValueError:
            return None
        moment = moment.astimezone(UTC)
    return moment


_HASH_NAMES: dict[str, str | None] = {}


def _hash_name(algo: str) -> str | None:
    """hashlib name for a WARC digest algorithm label (``sha1``, ``SHA-256``, ...)."""
    name = _HASH_NAMES.get(algo)
    if name is None and algo not in _HASH_NAMES:
        name = algo.strip().lower().replace("-", "").replace("_", "")
        name = _HASH_NAMES[algo] = name if name in hashlib.algorithms_available else None
    return name


_B32_TO_INT = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567abcdefghijklmnopqrstuvwxyz",
    "0123456789abcdefghijklmnopqrstuv0123456789abcdefghijklmnop",
)
_RE_B32 = re.compile(r"[A-Za-z2-7]+=*")
_RE_HEX = re.compile(r"[0-9A-Fa-f]+")
_DIGEST_SIZES: dict[str, int] = {}


def _b32_bytes(encoded: str, size: int) -> bytes | None:
    """RFC 4648 base32 (any case, padding optional) -> ``size`` bytes, via ``int`` (fast)."""
    if not _RE_B32.fullmatch(encoded):
        return None
    chars = encoded.rstrip("=")
    extra = 5 * len(chars) - 8 * size
    if not 0 <= extra < 5:
        return None
    return (int(chars.translate(_B32_TO_INT), 32) >> extra).to_bytes(size, "big")


def decode_digest(value: str) -> tuple[str | None, bytes | None]:
    """Split ``algo:value`` and decode the value (base32, base16 or base64/base64url).

    Returns ``(hashlib name, digest bytes)``; the name is None for an unknown algorithm, the
    bytes are None when the value cannot be a digest of that algorithm (it can never match).
    """
    algo, sep, encoded = value.partition(":")
    if not sep:
        return None, None
    name = _hash_name(algo)
    if name is None:
        return None, None
    size = _DIGEST_SIZES.get(name)
    if size is None:
        size = _DIGEST_SIZES[name] = hashlib.new(name).digest_size
    encoded = encoded.strip()
    if len(encoded) == 2 * size and _RE_HEX.fullmatch(encoded):
        return name, bytes.fromhex(encoded)
    raw = _b32_bytes(encoded, size)
    if raw is not None:
        return name, raw
    alt = b"-_" if ("-" in encoded or "_" in encoded) else None
    try:
        raw = base64.b64decode(encoded + "=" * (-len(encoded) % 4), altchars=alt, validate=True)
    except (ValueError, binascii.Error):
        return name, None
    return name, raw if len(raw) == size else None


def _mime_of(value: str | None) -> str | None:
    """Content type without parameters, split the way cdxj-indexer splits it."""
    if value:
        return _RE_MIME_SPLIT.split(value, 1)[0].strip()
    return value


def _status_code(http: Any) -> int | None:
    code = http.statusline.split(" ", 1)[0]
    if code.isdigit() and len(code) <= 4:
        return int(code)
    return None


def _join_errors(codes: Iterable[str]) -> str | None:
    seen: list[str] = []
    for code in codes:
        if code not in seen:
            seen.append(code)
    return ";".join(seen) if seen else None


# ---------------------------------------------------------------------------------------------
# HTTP headers and POST bodies
# ---------------------------------------------------------------------------------------------


class _HeadersTooLong(ValueError):
    pass


_HTTP_PARSER: Any = None

# A header block that warcio's parser reads line by line exactly as str.split would: ASCII,
# CRLF line ends, every line starting with a visible character (no continuation lines, no
# blank-looking lines), ended by an empty line.
_SIMPLE_HEADER_BLOCK = re.compile(rb"(?:[!-~][ -~\t]*\r\n)+\r\n")


class HttpHead:
    """Parsed HTTP status line and headers: the parts of warcio's ``StatusAndHeaders`` used here.

    ``protocol`` is the first word of the status line (``HTTP/1.1``, or the method of a
    request), ``statusline`` the rest (``200 OK``, or the request path and version).
    """

    __slots__ = ("protocol", "statusline", "headers", "_first")

    def __init__(self, protocol: str, statusline: str, headers: list[tuple[str, str]]) -> None:
        self.protocol = protocol
        self.statusline = statusline
        self.headers = headers
        self._first: dict[str, str] | None = None

    def get_header(self, name: str, default: str | None = None) -> str | None:
        """First value of a header, case-insensitively (as warcio's ``get_header``)."""
        first = self._first
        if first is None:
            first = self._first = {}
            for key, value in reversed(self.headers):
                first[key.lower()] = value
        return first.get(name.lower(), default)

    def __bool__(self) -> bool:  # warcio: an empty status line and no headers is "no headers"
        return bool(self.statusline or self.headers)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HttpHead) and (
            (self.protocol, self.statusline, self.headers)
            == (other.protocol, other.statusline, other.headers)
        )

    def __repr__(self) -> str:
        return f"HttpHead({self.protocol!r}, {self.statusline!r}, {self.headers!r})"


def parse_simple_header_block(raw: bytes) -> HttpHead | None:
    """Parse a header block of the simple form, exactly as warcio's parser would.

    The simple form: ASCII, CRLF line ends, every line starting with a visible character
    (so no continuation lines and no blank-looking lines) and an empty line at the end.
    Returns None for anything else. Reading it with ``str.split`` gives the same result as
    warcio's line-by-line parser, several times faster; a property test checks this.
    """
    if not _SIMPLE_HEADER_BLOCK.fullmatch(raw):
        return None
    lines = raw[:-4].decode("ascii").split("\r\n")
    protocol_status = lines[0].rstrip().split(" ", 1)
    headers = []
    for line in lines[1:]:
        name, sep, value = line.rstrip().partition(":")
        if sep:
            headers.append((name.rstrip(" \t"), value.lstrip()))
    statusline = protocol_status[1].strip() if len(protocol_status) > 1 else ""
    return HttpHead(protocol_status[0], statusline, headers)


def parse_header_block_with_warcio(raw: bytes) -> HttpHead | None:
    """Parse a header block with warcio's own ``StatusAndHeadersParser`` (None if empty)."""
    global _HTTP_PARSER
    if _HTTP_PARSER is None:
        from warcio.statusandheaders import StatusAndHeadersParser

        _HTTP_PARSER = StatusAndHeadersParser([], verify=False)
    try:
        parsed = _HTTP_PARSER.parse(io.BytesIO(raw))
    except EOFError:
        return None
    return HttpHead(parsed.protocol, parsed.statusline, parsed.headers)


def _parse_http_headers(block: Any) -> tuple[HttpHead | None, bytes, bytes]:
    """Parse the HTTP status line and headers at the start of ``block`` as warcio does.

    Returns ``(HttpHead or None, raw header bytes, payload bytes already read)``; None for
    an empty block. The parser runs on an in-memory copy of the first 64 KiB (more if the
    headers are longer), so it consumes exactly the lines it would from the stream; what
    follows the headers in that chunk is the start of the payload. The raw header bytes are
    kept for digests taken over the whole block (ClueWeb09).
    """
    buf = block.read(BLOCK_SIZE)
    simple = _SIMPLE_HEADER_BLOCK.match(buf)
    if simple is not None:
        used = simple.end()
        return parse_simple_header_block(buf[:used]), buf[:used], buf[used:]
    global _HTTP_PARSER
    if _HTTP_PARSER is None:
        from warcio.statusandheaders import StatusAndHeadersParser

        _HTTP_PARSER = StatusAndHeadersParser([], verify=False)
    while True:
        stream = io.BytesIO(buf)
        try:
            parsed = _HTTP_PARSER.parse(stream)
        except EOFError:
            return None, b"", buf
        used = stream.tell()
        if used < len(buf):
            break  # the parser stopped at the blank line: headers complete
        more = block.read(BLOCK_SIZE)
        if not more:
            break
        buf += more
        if len(buf) > MAX_HTTP_HEADER_BYTES:
            raise _HeadersTooLong("HTTP headers longer than 1 MiB")
    http = HttpHead(parsed.protocol, parsed.statusline, parsed.headers)
    return http, buf[:used], buf[used:]


def _decoded_body(raw: bytes, http: Any) -> bytes:
    """Undo chunking and content-encoding of a captured request body, as warcio does."""
    from warcio.bufferedreaders import BufferedReader, ChunkedDataReader

    encoding = (http.get_header("content-encoding") or "").lower() or None
    if encoding not in BufferedReader.get_supported_decompressors():
        encoding = None
    try:
        if http.get_header("transfer-encoding") == "chunked":
            return ChunkedDataReader(io.BytesIO(raw), decomp_type=encoding).read()
        if encoding:
            return BufferedReader(io.BytesIO(raw), decomp_type=encoding).read()
    except Exception:
        return raw
    return raw


def _json_query(data: bytes) -> str:
    """Flatten a JSON body into ``key=value`` pairs like pywb (``name.2_`` for repeats)."""
    out: dict[str, str] = {}
    dupes: dict[str, int] = {}

    def key(name: str) -> str:
        if name not in out:
            return name
        dupes[name] = dupes.get(name, 1) + 1
        return f"{name}.{dupes[name]}_"

    def walk(obj: Any, name: str = "") -> None:
        if isinstance(obj, dict):
            for child, value in obj.items():
                walk(value, child)
        elif isinstance(obj, list):
            for value in obj:
                walk(value, name)
        elif name:
            out[key(name)] = str(obj)

    try:
        walk(json.loads(data))
    except json.JSONDecodeError:
        if b"\n" not in data:
            raise
        for line in data.split(b"\n"):
            walk(json.loads(line))
    return urlencode(out)


def _multipart_query(mime: str, data: bytes) -> str:
    import email
    import email.policy

    message = email.message_from_bytes(
        b"Content-Type: " + mime.encode("latin-1", "replace") + b"\r\n\r\n" + data,
        policy=email.policy.compat32,
    )
    values: list[tuple[str, Any]] = []
    for part in message.get_payload() if message.is_multipart() else []:
        name = part.get_param("name", header="content-disposition") or ""
        body = part.get_payload(decode=True) or b""
        if part.get_filename():
            values.append((str(name), body))
        else:
            values.append((str(name), body.decode("utf-8", "replace")))
    return urlencode(values, True)


def post_query(mime: str | None, data: bytes) -> str:
    """The query pywb derives from a POST/PUT body (cdxj-indexer's ``query_extract``).

    Form bodies are unquoted, JSON bodies flattened, multipart fields urlencoded, anything
    else becomes ``__wb_post_data=<base64>``; the result is cut to 4096 characters.
    Differences from cdxj-indexer: multipart is parsed with the standard library's email
    parser, and AMF bodies are treated as binary (base64).
    """
    mime = mime or ""

    def binary() -> str:
        return "__wb_post_data=" + base64.b64encode(data).decode("ascii")

    if mime.startswith("application/x-www-form-urlencoded"):
        try:
            query = unquote_plus(data.decode("utf-8"))
        except UnicodeDecodeError:
            query = binary()
    elif mime.startswith("multipart/"):
        if "boundary=" not in mime:
            query = binary()
        else:
            try:
                query = _multipart_query(mime, data)
            except Exception:
                query = binary()
    elif mime.startswith("application/json"):
        try:
            query = _json_query(data)
        except Exception:
            query = ""
    elif mime.startswith("text/plain"):
        try:
            query = _json_query(data)
        except Exception:
            query = binary()
    else:
        query = binary()
    return query[:MAX_POST_QUERY]


def _post_append(method: str, http: Any, raw_body: bytes, url: str) -> str:
    """``?__wb_method=POST&<query>`` (or ``&...``) to append to the request URL."""
    length_header = http.get_header("content-length")
    query: str | None
    try:
        length = int(length_header) if length_header is not None else 8192
    except ValueError:
        query = None
    else:
        body = _decoded_body(raw_body, http)[: max(length, 0)]
        query = post_query(http.get_header("content-type"), body)
    append = ("&" if "?" in url else "?") + "__wb_method=" + method
    if query:
        append += "&" + query
    return append


# ---------------------------------------------------------------------------------------------
# records -> rows
# ---------------------------------------------------------------------------------------------


def _empty_row(name: str, slot: Slot) -> dict[str, Any]:
    return dict.fromkeys(_COLUMNS, None) | {"file": name, "offset": slot.offset}


class _Indexer:
    """Turns the slots of one file into rows (the consumer side of the readers)."""

    def __init__(self, name: str, all_records: bool) -> None:
        self.name = name
        self.all_records = all_records
        self.batches: list[pa.RecordBatch] = []
        self.rows: list[dict[str, Any]] = []
        self.pending: list[Slot] = []
        # previous record, for joining request/response pairs:
        # (slot, row, post append str, _join_key of the slot)
        self.prev: tuple[Slot, dict | None, str | None, tuple] | None = None
        self.first_key: tuple | None = None  # _join_key of the first slot (split ranges)

    # -- driving ------------------------------------------------------------------------------
    def run(self, slots: Iterator[Slot]) -> None:
        for slot in slots:
            if self.first_key is None:
                self.first_key = _join_key(slot)
            slot.row = self.process(slot)
            self.pending.append(slot)
            self._emit_closed()
        self._emit_closed()

    def _emit_closed(self) -> None:
        done = 0
        for slot in self.pending:
            if not slot.closed:
                break
            done += 1
            row = slot.row
            if row is None:
                continue
            row["offset"] = slot.offset
            row["length"] = slot.length
            if slot.truncated:
                row["truncated"] = True
            if slot.errors:
                old = row["error"].split(";") if row["error"] else []
                row["error"] = _join_errors(old + slot.errors)
            self.rows.append(row)
        if done:
            del self.pending[:done]
        if len(self.rows) > 1024:  # keep the last row mutable for request/response joins
            self._flush(self.rows[:-1])
            del self.rows[:-1]

    def _flush(self, rows: list[dict[str, Any]]) -> None:
        """Turn finished rows into an Arrow batch, computing their SURT keys on the way.

        Rows carry the URL to key in ``urlkey`` until here: keying a batch of URLs in one
        tight loop is markedly faster than one at a time between payloads (CPU caches),
        and a POST response's key can still change when its request comes after it.
        """
        for row in rows:
            source = row["urlkey"]
            if source is not None:
                row["urlkey"] = url_to_urlkey(source)
        self.batches.append(pa.RecordBatch.from_pylist(rows, CAPTURE_SCHEMA))

    def table(self) -> pa.Table:
        for slot in self.pending:  # readers close every slot; this is a safety net
            slot.closed = True
        self._emit_closed()
        if self.rows:
            self._flush(self.rows)
            self.rows = []
        return pa.Table.from_batches(self.batches, CAPTURE_SCHEMA)

    def add_failure_row(self, offset: int, error: str) -> None:
        """A row for a failure that ended the walk early (not expected; never lose it)."""
        row = dict.fromkeys(_COLUMNS, None) | {"file": self.name, "offset": offset}
        row["error"] = error
        for slot in self.pending:
            slot.closed = True
        self._emit_closed()
        self.rows.append(row)

    # -- one record ----------------------------------------------------------------------------
    def process(self, slot: Slot) -> dict[str, Any] | None:
        """The row for one slot, or None for a record that is not a capture.

        Reads the record's block: HTTP headers (for status, mime, Location and, in requests,
        the method), then the payload through the hashers. Length and framing errors are
        filled in later from the slot, when the reader closes it.
        """
        if slot.kind == "error":
            self.prev = None
            return _empty_row(self.name, slot)
        headers = slot.headers
        rec_type = slot.rec_type
        uri = clean_target_uri(headers.get("uri"))
        is_arc = slot.kind == "arc"
        if is_arc:
            wanted = rec_type == "response" or self.all_records
        else:
            wanted = self.all_records or rec_type in ("response", "revisit") or (
                rec_type == "resource"
                and headers.get("content_type", "").strip() != "application/warc-fields"
            )
        is_request = rec_type == "request"
        http_record = (
            rec_type in ("response", "request", "revisit")
            and uri is not None
            and uri.startswith(_HTTP_SCHEMES)
            and slot.content_length != 0
        )
        if not wanted and not (is_request and http_record):
            self._join(slot, None, None)
            return None

        block = slot.block
        errors: list[str] = []
        http = None
        header_bytes = head = b""
        if http_record:
            try:
                http, header_bytes, head = _parse_http_headers(block)
            except _HeadersTooLong as exc:
                errors.append("unreadable_record: " + str(exc))
                block = None
            if http is not None and not http:  # a blank line where headers should be
                http = None

        post_append = None
        method = http.protocol if (is_request and http is not None) else None
        capture_post = method is not None and method.upper() in ("POST", "PUT")

        if not wanted:  # a request that only matters for its POST body
            if capture_post and block is not None:
                raw = head[:POST_BODY_CAP] + _read_capped(block, POST_BODY_CAP - len(head))
                post_append = _post_append(method, http, raw, uri)
            self._join(slot, None, post_append)
            return None

        # --- payload: hash it as stored (after the HTTP headers, chunking and all) ---------
        declared = headers.get("payload_digest")
        is_revisit = rec_type == "revisit"
        algo = expected = None
        if declared and not is_revisit:
            algo, expected = decode_digest(declared)
        sha256 = hashlib.sha256()
        hashers = [sha256]
        verifier = None
        whole_block = False
        if algo is not None:
            whole_block = bool(header_bytes) and declared == headers.get("block_digest")
            if algo == "sha256" and not whole_block:
                verifier = sha256
            else:
                verifier = hashlib.new(algo)
                if whole_block:  # ClueWeb09: "payload" digest taken over the whole block
                    verifier.update(header_bytes)
                hashers.append(verifier)
        computed = None
        if not declared and rec_type not in _NO_COMPUTED_DIGEST:
            computed = hashlib.sha1()
            hashers.append(computed)
        # Chunked bodies are stored with their chunk framing; most tools (warcio among
        # them) digest them as stored, the WARC spec says after removing the framing.
        # Accept either: hash the de-chunked body too (only for chunked records).
        dechunked_verifier = None
        if (
            verifier is not None
            and not whole_block
            and http is not None
            and "chunked" in (http.get_header("transfer-encoding") or "").lower()
        ):
            dechunked_verifier = hashlib.new(algo)
        body_head = bytearray() if capture_post else None
        size = 0
        if block is not None:
            hashing = _HashingReader(head, block, [h.update for h in hashers], body_head)
            if dechunked_verifier is not None:
                _hash_dechunked(hashing, dechunked_verifier)
            hashing.drain()
            size = hashing.size
        if body_head is not None and block is not None:
            post_append = _post_append(method, http, bytes(body_head), uri)

        # --- fields ------------------------------------------------------------------------
        date_raw = headers.get("date")
        if is_arc:
            parts = slot.first_line.rstrip(b"\r\n").rsplit(b" ", 4)
            date_raw = parts[2].decode("latin-1") if len(parts) == 5 else date_raw
            when, timestamp = _capture_time(headers.get("date"))
        else:
            when, timestamp = _capture_time(date_raw)
        if when is None:
            errors.append("invalid_warc_date")

        status = None
        if http is not None and rec_type in ("response", "revisit"):
            status = _status_code(http)
        if status is None and rec_type == "response" and uri and uri.startswith(_HTTP_SCHEMES):
            errors.append("arc_missing_status" if is_arc else "missing_http_status")

        if is_revisit:
            mime = "warc/revisit"
        elif rec_type in ("response", "request"):
            mime = _mime_of(http.get_header("content-type")) if http is not None else None
        else:
            mime = _mime_of(headers.get("content_type"))

        readable = block is not None
        if is_revisit or not declared or algo is None or not readable:
            verified = None
        else:
            verified = expected is not None and (
                verifier.digest() == expected
                or (dechunked_verifier is not None and dechunked_verifier.digest() == expected)
            )

        row = {
            "file": self.name,
            "offset": slot.offset,
            "length": None,
            "record_type": rec_type,
            "target_uri": uri,
            "urlkey": uri or None,  # the URL to key; SURT-ed in _flush
            "capture_time": when,
            "timestamp": timestamp,
            "http_status": status,
            "redirect_location": (
                http.get_header("location") if status is not None and 300 <= status < 400 else None
            ),
            "mime": mime,
            "declared_payload_digest": declared,
            "digest_verified": verified,
            "payload_sha256": sha256.hexdigest() if readable and not is_revisit else None,
            "payload_length": size if readable and not is_revisit else None,
            "cdx_digest": declared
            or ("sha1:" + base64.b32encode(computed.digest()).decode() if computed else None),
            "refers_to_uri": headers.get("refers_uri"),
            "refers_to_date": headers.get("refers_date"),
            "record_id": None if is_arc else headers.get("id"),
            "warc_date_raw": date_raw,
            "truncated": "truncated" in headers,
            "error": _join_errors(errors),
        }
        self._join(slot, row, post_append)
        return row

    def _join(self, slot: Slot, row: dict | None, post_append: str | None) -> None:
        """Pair adjacent request/response records (pywb) to key POST responses by body."""
        key = _join_key(slot)
        prev, self.prev = self.prev, (slot, row, post_append, key)
        if prev is None:
            return
        order = _pair_order(prev[3], key)
        if not order:
            return
        first, second = prev, (slot, row, post_append)
        req, resp = (first, second) if order == 1 else (second, first)
        self.prev = None  # a pair is consumed, as in pywb/cdxj-indexer
        append = req[2]
        resp_row = resp[1]
        if append and resp_row is not None and resp_row["target_uri"] is not None:
            url = clean_target_uri(req[0].headers.get("uri")) or resp_row["target_uri"]
            resp_row["urlkey"] = url + append  # keyed with the body query in _flush


def _join_key(slot: Slot) -> tuple:
    """What decides whether two adjacent records pair: (kind, type, URI, id, concurrent-to)."""
    headers = slot.headers
    return (
        slot.kind, slot.rec_type, clean_target_uri(headers.get("uri")), headers.get("id"),
        headers.get("concurrent_to"),
    )


def _pair_order(a: tuple, b: tuple) -> int:
    """Whether record ``b`` pairs with the record ``a`` before it (pywb's request/response join).

    0: no pair; 1: ``a`` is the request and ``b`` its response (or revisit); 2: ``b`` is the
    request of response ``a``. Both must be WARC records with the same target URI, and
    ``b``'s WARC-Concurrent-To must be ``a``'s WARC-Record-ID (both missing counts, as in
    pywb). Arguments are :func:`_join_key` tuples.
    """
    if a[0] != "warc" or b[0] != "warc" or a[2] != b[2] or b[4] != a[3]:
        return 0
    if a[1] == "request" and b[1] in ("response", "revisit"):
        return 1
    if b[1] == "request" and a[1] in ("response", "revisit"):
        return 2
    return 0


class _HashingReader:
    """Reads a payload (``head`` already read, then ``block``) and feeds every byte to hashers.

    Also counts the bytes and keeps the first ``POST_BODY_CAP`` of them in ``capture`` when
    given. Has ``read``/``readline`` so warcio's ChunkedDataReader can pull through it.
    """

    __slots__ = ("_head", "_block", "_updates", "_capture", "size")

    def __init__(
        self, head: bytes, block: Any, updates: list[Any], capture: bytearray | None
    ) -> None:
        self._head = io.BytesIO(head) if head else None
        self._block = block
        self._updates = updates
        self._capture = capture
        self.size = 0

    def _feed(self, data: bytes) -> bytes:
        if data:
            self.size += len(data)
            for update in self._updates:
                update(data)
            capture = self._capture
            if capture is not None and len(capture) < POST_BODY_CAP:
                capture += data[: POST_BODY_CAP - len(capture)]
        return data

    def read(self, size: int = BLOCK_SIZE) -> bytes:
        if self._head is not None:
            data = self._head.read(size)
            if data:
                return self._feed(data)
            self._head = None
        return self._feed(self._block.read(size))

    def readline(self, size: int = BLOCK_SIZE) -> bytes:
        if self._head is not None:
            data = self._head.readline(size)
            if data:
                if not data.endswith(b"\n") and len(data) < size:
                    data += self._block.readline(size - len(data))
                return self._feed(data)
            self._head = None
        return self._feed(self._block.readline(size))

    def drain(self) -> None:
        while self.read(BLOCK_SIZE):
            pass


def _hash_dechunked(raw: _HashingReader, hasher: Any) -> None:
    """Hash the body with its chunked framing removed (warcio's ChunkedDataReader)."""
    from warcio.bufferedreaders import ChunkedDataReader

    dechunked = ChunkedDataReader(raw, block_size=BLOCK_SIZE)
    try:
        while data := dechunked.read(BLOCK_SIZE):
            hasher.update(data)
    except Exception:  # framing beyond repair: only the digest as stored can match
        hasher.update(b"\x00not-chunked")


def _read_capped(block: Any, cap: int) -> bytes:
    parts, size = [], 0
    while size < cap:
        chunk = block.read(min(BLOCK_SIZE, cap - size))
        if not chunk:
            break
        parts.append(chunk)
        size += len(chunk)
    return b"".join(parts)


# ---------------------------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------------------------


def _single_row_table(name: str, offset: int, error: str, length: int | None = None) -> pa.Table:
    row = dict.fromkeys(_COLUMNS, None) | {
        "file": name, "offset": offset, "length": length, "error": error,
    }
    return pa.Table.from_pylist([row], CAPTURE_SCHEMA)


def _starts_as_warc(path: str, gz: bool) -> bool:
    """True if the first record line is a WARC version line (else ARC or garbage)."""
    import zlib

    with open(path, "rb") as fh:
        head = fh.read(BLOCK_SIZE)
    if gz:
        try:
            head = zlib.decompressobj(31).decompress(head, 4096)
        except zlib.error:
            return False
    return head.lstrip(b"\r\n").startswith(b"WARC/")


def _with_reader_metadata(table: pa.Table, used: str, note: str | None) -> pa.Table:
    meta = {b"citeaudit.reader": used.encode()}
    if note:
        meta[b"citeaudit.fallback_reason"] = note.encode("utf-8", "replace")
    return table.replace_schema_metadata(meta)


def index_file(
    path: str | Path,
    *,
    name: str | None = None,
    reader: str = "auto",
    all_records: bool = False,
) -> pa.Table:
    """Index one WARC/ARC file (plain or gzip) into rows of :data:`CAPTURE_SCHEMA`.

    ``name`` goes in the ``file`` column (default: ``str(path)``). ``reader``: ``"auto"``
    (FastWARC for WARC files whose framing it gets right, else warcio), ``"warcio"`` or
    ``"fastwarc"`` (a file FastWARC refuses becomes a single ``fastwarc_refused: ...`` row).
    ``all_records`` also indexes warcinfo, request, metadata and other records.

    Never raises on bad input: an unreadable file, unsupported compression or unparseable
    bytes become rows with ``error`` set; good records around them are indexed. Rows come in
    file order. The table's schema metadata says which reader produced it
    (``citeaudit.reader``) and why FastWARC was not used (``citeaudit.fallback_reason``).
    """
    if reader not in READERS:
        raise ValueError(f"reader must be one of {READERS}, not {reader!r}")
    path = str(path)
    name = path if name is None else name
    try:
        return _index_file(path, name, reader, all_records)
    except Exception as exc:  # never raise on input (the walks catch their own errors)
        detail = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
        return _single_row_table(name, 0, "unreadable_file: " + detail)


def _index_file(path: str, name: str, reader: str, all_records: bool) -> pa.Table:
    try:
        compression = sniff_compression(path)
    except OSError as exc:
        return _single_row_table(name, 0, f"unreadable_file: {exc.strerror or exc}")
    if compression == "empty":
        return CAPTURE_SCHEMA.empty_table()
    if compression not in ("gzip", "none"):
        size = os.path.getsize(path)
        return _single_row_table(name, 0, f"unsupported_compression: {compression}", size)
    gz = compression == "gzip"

    note = None
    if reader in ("auto", "fastwarc"):
        if _starts_as_warc(path, gz):
            indexer = _Indexer(name, all_records)
            try:
                indexer.run(fastwarc_slots(path, gz=gz))
                return _with_reader_metadata(indexer.table(), "fastwarc", None)
            except FastwarcRefused as exc:
                note = str(exc)
            except Exception as exc:  # a FastWARC or internal surprise: warcio decides
                note = f"{type(exc).__name__}: {exc}"
        else:
            note = "not a WARC file (ARC or unknown format)"
        if reader == "fastwarc":
            return _with_reader_metadata(
                _single_row_table(name, 0, "fastwarc_refused: " + note), "fastwarc", note
            )

    indexer = _Indexer(name, all_records)
    try:
        with open(path, "rb") as fh:
            indexer.run(warcio_slots(fh, gz=gz))
    except Exception as exc:  # never raise: keep what was indexed, report the rest
        last = indexer.pending[-1].offset if indexer.pending else 0
        detail = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
        indexer.add_failure_row(last, "unreadable_file: " + detail)
    return _with_reader_metadata(indexer.table(), "warcio", note)


def _index_job(args: tuple[str, str, str, bool]) -> pa.Table:
    path, name, reader, all_records = args
    return index_file(path, name=name, reader=reader, all_records=all_records)


# ---------------------------------------------------------------------------------------------
# splitting one large gzip WARC into byte ranges for parallel workers
# ---------------------------------------------------------------------------------------------


def _may_cut(before: dict[str, str], after: dict[str, str]) -> bool:
    """False if two adjacent records (WARC headers read by the cut scan) may be a pair.

    Only a hint for choosing cuts (the records' real pairing is checked after indexing):
    a request next to a response/revisit with the same URI, or either one naming the other
    as concurrent, is not cut apart.
    """
    kinds = {before.get("type"), after.get("type")}
    if "request" not in kinds or not kinds & {"response", "revisit"}:
        return True
    same_uri = clean_target_uri(before.get("uri")) == clean_target_uri(after.get("uri"))
    linked = after.get("concurrent_to") == before.get("id") or (
        before.get("concurrent_to") == after.get("id")
    )
    return not (same_uri or linked)


def _plan_split(path: str, parts: int, min_bytes: int | None) -> list[tuple[int, int]] | None:
    """Byte ranges ``[(start, end), ...]`` to index a large gzip WARC in parallel, or None.

    Only ``.warc.gz`` files larger than ``min_bytes`` whose first gzip member holds a WARC
    record are split, into at most ``parts`` ranges of at least ``min_bytes / 4`` each;
    the cuts come from :func:`~citeaudit.warc_readers.gzip_record_cuts` (a gzip member
    boundary between two records, not between a request and its response). None when the
    file should be indexed whole (also when no cut is found, or on any error).
    """
    if parts < 2 or min_bytes is None or not path.lower().endswith(".warc.gz"):
        return None
    try:
        size = os.path.getsize(path)
        if size <= min_bytes:
            return None
        parts = min(parts, max(2, size // max(min_bytes // 4, 1)))
        if sniff_compression(path) != "gzip" or not _starts_as_warc(path, True):
            return None
        near = [size * k // parts for k in range(1, parts)]
        cuts = gzip_record_cuts(path, near, can_cut=_may_cut)
    except Exception as exc:  # never let planning break indexing: index the file whole
        _log.debug("not splitting %s: %s: %s", path, type(exc).__name__, exc)
        return None
    if not cuts:
        return None
    bounds = [0, *cuts, size]
    return list(zip(bounds, bounds[1:], strict=False))


_RangeResult = tuple[pa.Table | None, str | None, tuple | None, tuple | None]


def _index_range_job(args: tuple[str, str, int, int, bool]) -> _RangeResult:
    """Index the records in one byte range with FastWARC (a worker's share of a split file).

    Returns ``(table, None, first key, last key)``: the rows, the :func:`_join_key` of the
    range's first record and of its last record if that is still unpaired (None if it was
    consumed by a request/response pair), so the caller can check that no pair spans a
    cut. On a refusal or any error: ``(None, reason, None, None)``.
    """
    path, name, start, end, all_records = args
    indexer = _Indexer(name, all_records)
    try:
        indexer.run(fastwarc_slots(path, gz=True, start=start, end=end))
        table = indexer.table()
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}"[:200], None, None
    last = indexer.prev[3] if indexer.prev is not None else None
    return table, None, indexer.first_key, last


def _combine_ranges(results: list[_RangeResult]) -> tuple[pa.Table | None, str | None]:
    """The rows of a split file from its ranges' results (in file order), or (None, why).

    Accepted only if every range was read by FastWARC without doubt and no request/response
    pair would have been joined across a cut (in a whole-file read, the last unpaired record
    of a range would be paired with the first record of the next one).
    """
    for table, note, first, _last in results:
        if table is None or first is None:
            return None, note or "a range has no records"
    for (_t, _n, _f, last), (_t2, _n2, first, _l2) in zip(results, results[1:], strict=False):
        if last is not None and _pair_order(last, first):
            return None, "a request/response pair spans a cut"
    tables = [table for table, *_ in results]
    return pa.concat_tables(tables), None


def _index_ranges_serial(
    path: str, name: str, ranges: list[tuple[int, int]], all_records: bool = False
) -> tuple[pa.Table | None, str | None]:
    """Index a split file range by range in this process (what the workers do; for tests)."""
    results = [_index_range_job((path, name, a, b, all_records)) for a, b in ranges]
    return _combine_ranges(results)


def iter_index_paths(
    paths: list[tuple[Path, str]],
    *,
    workers: int = 0,
    reader: str = "auto",
    all_records: bool = False,
    split_min_bytes: int | None = SPLIT_MIN_BYTES,
) -> Iterator[tuple[str, pa.Table]]:
    """Index several files in parallel processes; yield ``(name, table)`` as each finishes.

    The streaming form of :func:`index_paths`, for batches whose rows should not all be held
    at once (a table costs ~450 bytes per row): write each table out as it arrives.
    ``workers=0`` means ``os.cpu_count()``; with one worker (or one file that is not split)
    everything runs in this process. Largest files are started first.

    A gzip-per-record ``.warc.gz`` file larger than ``split_min_bytes`` (None: never) is cut
    into up to ``workers`` byte ranges at gzip member boundaries, indexed in parallel with
    FastWARC and put back together: the rows are identical to indexing it whole. On any
    doubt (no cut point found, a range FastWARC refuses, a request/response pair across a
    cut, an error) the file is indexed whole, as without splitting.

    If a worker process dies (a crash inside a C extension), its files are indexed again
    here with warcio; should that fail too, the file gets a single ``unreadable_file`` row.
    Tables come without reader metadata.
    """
    if reader not in READERS:
        raise ValueError(f"reader must be one of {READERS}, not {reader!r}")
    jobs = [(str(p), n, reader, all_records) for p, n in paths]

    def size_of(job: tuple[str, str, str, bool]) -> int:
        try:
            return os.path.getsize(job[0])
        except OSError:
            return 0

    jobs.sort(key=size_of, reverse=True)
    workers = workers or os.cpu_count() or 1
    plans: dict[int, list[tuple[int, int]]] = {}
    if workers > 1 and reader != "warcio":
        for index, job in enumerate(jobs):
            ranges = _plan_split(job[0], workers, split_min_bytes)
            if ranges is not None:
                plans[index] = ranges
    # tasks: (bytes, job index, range index or None for the whole file)
    tasks: list[tuple[int, int, int | None]] = []
    for index, job in enumerate(jobs):
        if index in plans:
            tasks.extend((b - a, index, r) for r, (a, b) in enumerate(plans[index]))
        else:
            tasks.append((size_of(job), index, None))
    tasks.sort(key=lambda task: task[0], reverse=True)  # stable: file order breaks ties
    workers = min(workers, len(tasks))
    if workers <= 1:
        for job in jobs:
            yield job[1], _index_job(job).replace_schema_metadata(None)
        return
    yield from _run_pool(jobs, plans, tasks, workers)


def _run_pool(
    jobs: list[tuple[str, str, str, bool]],
    plans: dict[int, list[tuple[int, int]]],
    tasks: list[tuple[int, int, int | None]],
    workers: int,
) -> Iterator[tuple[str, pa.Table]]:
    """Run whole-file and range tasks in a process pool; see :func:`iter_index_paths`."""
    from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

    pending: dict[Future, tuple[int, int | None]] = {}
    parts: dict[int, list[_RangeResult | None]] = {i: [None] * len(r) for i, r in plans.items()}
    failed: list[int] = []  # job indexes to index again here with warcio

    with ProcessPoolExecutor(max_workers=workers) as pool:

        def submit(index: int, part: int | None) -> None:
            path, name, reader, all_records = jobs[index]
            try:
                if part is None:
                    future = pool.submit(_index_job, jobs[index])
                else:
                    start, end = plans[index][part]
                    future = pool.submit(
                        _index_range_job, (path, name, start, end, all_records)
                    )
            except Exception:  # the pool is broken (a worker died)
                failed.append(index)
                return
            pending[future] = (index, part)

        def abandon(index: int, why: str, whole: bool) -> None:
            """Give up splitting a file: drop its ranges, index it whole (or here)."""
            _log.info("indexing %s whole, not split: %s", jobs[index][0], why)
            parts.pop(index, None)
            for future, (other, _part) in list(pending.items()):
                if other == index and future.cancel():
                    del pending[future]
            if whole:
                submit(index, None)
            else:
                failed.append(index)

        for _size, index, part in tasks:
            submit(index, part)
        while pending:
            done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: (pending[f][0], pending[f][1] or 0)):
                index, part = pending.pop(future)
                if future.cancelled():
                    continue
                try:
                    result = future.result()
                except Exception:  # the worker died (BrokenProcessPool) or could not pickle
                    if part is None:
                        failed.append(index)
                    elif index in parts:
                        abandon(index, "a worker failed", whole=False)
                    continue
                if part is None:
                    yield jobs[index][1], result.replace_schema_metadata(None)
                    continue
                if index not in parts:  # splitting this file was abandoned already
                    continue
                if result[0] is None:
                    abandon(index, f"range {plans[index][part]}: {result[1]}", whole=True)
                    continue
                parts[index][part] = result
                if any(r is None for r in parts[index]):
                    continue
                table, why = _combine_ranges(parts[index])
                if table is None:
                    abandon(index, why or "cannot combine ranges", whole=True)
                    continue
                del parts[index]
                yield jobs[index][1], table
    for index in failed:
        path, name, _reader, all_records = jobs[index]
        try:
            table = index_file(path, name=name, reader="warcio", all_records=all_records)
        except Exception as exc:  # pragma: no cover - index_file does not raise on input
            table = _single_row_table(name, 0, f"unreadable_file: {exc}")
        yield name, table.replace_schema_metadata(None)


def index_paths(
    paths: list[tuple[Path, str]],
    *,
    workers: int = 0,
    reader: str = "auto",
    progress: bool = False,
    all_records: bool = False,
    split_min_bytes: int | None = SPLIT_MIN_BYTES,
) -> pa.Table:
    """Index several files, in parallel processes, into one table sorted by (file, offset).

    ``paths`` are ``(path, name)`` pairs; ``workers=0`` means ``os.cpu_count()``; one worker
    (or one file that is not split) runs in this process. ``.warc.gz`` files larger than
    ``split_min_bytes`` (None: never) are split into byte ranges indexed in parallel, with
    rows identical to indexing them whole. See :func:`iter_index_paths` for the scheduling,
    the splitting and what happens when a worker dies. ``progress`` shows a rich progress
    bar on stderr.
    """
    tables: list[pa.Table] = []
    with _progress(len(paths), progress) as advance:
        for name, table in iter_index_paths(
            paths, workers=workers, reader=reader, all_records=all_records,
            split_min_bytes=split_min_bytes,
        ):
            tables.append(table)
            advance(name)
    if not tables:
        return CAPTURE_SCHEMA.empty_table()
    table = pa.concat_tables(tables)
    return table.sort_by([("file", "ascending"), ("offset", "ascending")])


class _progress:
    """Context manager giving an ``advance(name)`` callback; a rich bar on stderr if asked."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total = total
        self.enabled = enabled
        self._bar: Any = None

    def __enter__(self) -> Any:
        if not self.enabled:
            return lambda _name: None
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        self._bar = Progress(
            "[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), console=Console(stderr=True), transient=False,
        )
        self._bar.start()
        task = self._bar.add_task("indexing WARCs", total=self.total)
        return lambda name: self._bar.update(task, advance=1, description=f"indexed {name}")

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


def _cdxj_eligible(error: str | None) -> bool:
    if not error:
        return True
    return not any(code.startswith(CDXJ_SKIPPED_ERRORS) for code in error.split(";"))


def to_cdxj_lines(table: pa.Table) -> Iterator[str]:
    """pywb-compatible CDXJ lines (no trailing newline), sorted as pywb sorts (by line).

    ``urlkey timestamp {"url", "mime", "status", "digest", "length", "offset", "filename"}``
    with the field order, string values and JSON spacing of cdxj-indexer; ``mime``,
    ``status`` and ``digest`` are left out when unknown. Rows that pywb could not replay
    (see :data:`CDXJ_SKIPPED_ERRORS`) or that lack a urlkey or timestamp are skipped.
    """
    cols = table.select(
        ["urlkey", "timestamp", "target_uri", "mime", "http_status", "cdx_digest", "length",
         "offset", "file", "error"]
    ).to_pydict()
    lines = []
    for urlkey, ts, url, mime, status, digest, length, offset, file, error in zip(
        *cols.values(), strict=True
    ):
        if urlkey is None or ts is None or offset is None or length is None:
            continue
        if not _cdxj_eligible(error):
            continue
        entry: dict[str, str] = {"url": url}
        if mime is not None:
            entry["mime"] = mime
        if status is not None:
            entry["status"] = str(status)
        if digest is not None:
            entry["digest"] = digest
        entry["length"] = str(length)
        entry["offset"] = str(offset)
        entry["filename"] = file
        lines.append(f"{urlkey} {ts} {json.dumps(entry)}")
    lines.sort()
    return iter(lines)


# ---------------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------------


def iter_archive_files(inputs: Iterable[str | Path]) -> Iterator[tuple[Path, str]]:
    """Expand files and directories into ``(path, name)`` pairs.

    A file is named as given; a file found under a directory is named by its path relative
    to that directory (POSIX separators), as cdxj-indexer's ``--dir-root`` does. Directories
    are searched recursively for ``*.warc``, ``*.warc.gz``, ``*.arc``, ``*.arc.gz``.
    Raises FileNotFoundError for a missing input.
    """
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            found = sorted(
                p for p in path.rglob("*") if p.is_file() and p.name.endswith(ARCHIVE_SUFFIXES)
            )
            for file in found:
                yield file, file.relative_to(path).as_posix()
        elif path.exists():
            yield path, str(item)
        else:
            raise FileNotFoundError(f"no such file or directory: {item}")


def register_cli(subparsers: Any) -> None:
    """Add ``index-warc PATH... [--out F] [--format parquet|cdxj] [--reader R] [--workers N]``."""
    parser = subparsers.add_parser(
        "index-warc",
        help="index WARC/ARC files into a capture table (parquet) or pywb CDXJ",
        description=(
            "Index WARC/ARC files (plain or gzip; directories are searched recursively) into "
            "one row per capture. Without --out, CDXJ goes to stdout and a summary to stderr."
        ),
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="WARC/ARC file or directory")
    parser.add_argument("--out", help="output file (.parquet or .cdxj)")
    parser.add_argument(
        "--format", choices=("parquet", "cdxj"), default=None,
        help="output format (default: from --out's suffix; cdxj on stdout)",
    )
    parser.add_argument("--reader", choices=READERS, default="auto")
    parser.add_argument("--workers", type=int, default=0, help="processes (0: one per CPU)")
    parser.add_argument(
        "--all-records", action="store_true",
        help="also index warcinfo, request, metadata and other records",
    )
    parser.set_defaults(func=_cli_index_warc)


def _cli_index_warc(args: Any) -> int:
    err = sys.stderr
    try:
        files = list(iter_archive_files(args.paths))
    except FileNotFoundError as exc:
        print(f"index-warc: {exc}", file=err)
        return 2
    if not files:
        print("index-warc: no *.warc, *.warc.gz, *.arc or *.arc.gz files found in "
              + ", ".join(map(str, args.paths)), file=err)
        return 2
    fmt = args.format
    if fmt is None:
        fmt = "parquet" if args.out and args.out.endswith(".parquet") else "cdxj"
    if fmt == "parquet" and not args.out:
        print("index-warc: --format parquet needs --out FILE.parquet", file=err)
        return 2
    if args.workers < 0:
        print("index-warc: --workers must be >= 0", file=err)
        return 2

    table = index_paths(
        files, workers=args.workers, reader=args.reader, progress=len(files) > 1,
        all_records=args.all_records,
    )
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            pq.write_table(table, args.out, compression="zstd")
        elif args.out:
            with open(args.out, "w", encoding="utf-8") as out:
                for line in to_cdxj_lines(table):
                    out.write(line + "\n")
        else:
            out = sys.stdout
            for line in to_cdxj_lines(table):
                out.write(line + "\n")
    except OSError as exc:
        print(f"index-warc: cannot write {args.out}: {exc.strerror or exc}", file=err)
        return 1
    _print_summary(table, len(files), err)
    return 0


def _print_summary(table: pa.Table, n_files: int, stream: Any) -> None:
    """A short summary on stderr: rows, files, and each error with the files it hit."""
    errors: dict[str, set[str]] = {}
    for file, error in zip(
        table.column("file").to_pylist(), table.column("error").to_pylist(), strict=True
    ):
        if error:
            for code in error.split(";"):
                errors.setdefault(code.split(":", 1)[0], set()).add(file)
    print(f"index-warc: {table.num_rows} rows from {n_files} file(s)", file=stream)
    for code, names in sorted(errors.items()):
        listed = ", ".join(sorted(names)[:5]) + (" ..." if len(names) > 5 else "")
        print(f"index-warc: {code} in {len(names)} file(s): {listed}", file=stream)
