"""HTTP head parsing: the status line and headers at the start of a record's block.

Why here: status, redirect target and content type of a capture (and the method of a
request) come from the HTTP head, which must be parsed exactly as warcio parses it. A fast
path reads the common simple form: the status line split, each header found by a regex when
asked for (the indexer asks for two or three); anything else goes to warcio's own parser.
Headers over :data:`MAX_HTTP_HEADER_BYTES` are refused rather than held in memory.
"""

from __future__ import annotations

import io
import re
from typing import Any

from citeaudit.archive.index.slots import BLOCK_SIZE

MAX_HTTP_HEADER_BYTES = 1 << 20
"""Longer HTTP header blocks are reported as unreadable instead of being held in memory."""


_RE_MIME_SPLIT = re.compile(r"[;\s]")


class HeadersTooLong(ValueError):
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

    A head read from a block of the simple form (see :func:`parse_simple_header_block`)
    keeps its raw bytes and is parsed lazily: the indexer asks for two or three headers of
    each record, and finding one line with a regex costs less than splitting every line.
    ``headers`` (the whole list) is built on first use.
    """

    __slots__ = ("protocol", "statusline", "_headers", "_first", "_raw")

    def __init__(self, protocol: str, statusline: str, headers: list[tuple[str, str]] | None,
                 raw: bytes | None = None) -> None:
        self.protocol = protocol
        self.statusline = statusline
        self._headers = headers
        self._first: dict[str, str | None] | None = None
        self._raw = raw

    @property
    def headers(self) -> list[tuple[str, str]]:
        """Every header as ``(name, value)``, in order (warcio's ``headers``)."""
        if self._headers is None:
            self._headers = _simple_header_lines(self._raw or b"")
        return self._headers

    def get_header(self, name: str, default: str | None = None) -> str | None:
        """First value of a header, case-insensitively (as warcio's ``get_header``)."""
        key = name.lower()
        first = self._first
        if first is None:
            first = self._first = {}
            if self._raw is None:
                for hname, value in reversed(self.headers):
                    first[hname.lower()] = value
        if self._raw is not None and key not in first:
            first[key] = _find_simple_header(self._raw, key)
        value = first.get(key)
        return default if value is None else value

    def __bool__(self) -> bool:  # warcio: an empty status line and no headers is "no headers"
        if self.statusline:
            return True
        if self._raw is not None and self._headers is None:
            return b":" in self._raw[self._raw.index(b"\r\n"):]
        return bool(self.headers)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HttpHead) and (
            (self.protocol, self.statusline, self.headers)
            == (other.protocol, other.statusline, other.headers)
        )

    def __repr__(self) -> str:
        return f"HttpHead({self.protocol!r}, {self.statusline!r}, {self.headers!r})"


_HEADER_PATTERNS: dict[str, re.Pattern[bytes]] = {}


def _find_simple_header(raw: bytes, key: str) -> str | None:
    """The first value of header ``key`` (lower case) in a simple-form block, else None.

    The same value as splitting the block (:func:`_simple_header_lines`): a line whose text
    before its first colon, stripped of trailing blanks, is ``key`` in any case, and its text
    after the colon stripped of blanks (a simple block has no other whitespace). The status
    line is not a header: a match must follow a CRLF.
    """
    pattern = _HEADER_PATTERNS.get(key)
    if pattern is None:
        if not key.isascii() or ":" in key or key.rstrip(" \t") != key:
            return None  # no header name of a simple block is spelled so
            return None
        pattern = _HEADER_PATTERNS[key] = re.compile(
            rb"\r\n" + re.escape(key.encode("ascii")) + rb"[ \t]*:([^\r\n]*)", re.IGNORECASE
        )
    match = pattern.search(raw)
    return None if match is None else match.group(1).decode("ascii").strip()


def _simple_header_lines(raw: bytes) -> list[tuple[str, str]]:
    """The ``(name, value)`` list of a simple-form block, as warcio's parser reads it."""
    headers = []
    for line in raw[:-4].decode("ascii").split("\r\n")[1:]:
        name, sep, value = line.rstrip().partition(":")
        if sep:
            headers.append((name.rstrip(" \t"), value.lstrip()))
    return headers


def parse_simple_header_block(raw: bytes) -> HttpHead | None:
    """Parse a header block of the simple form, exactly as warcio's parser would.

    The simple form: ASCII, CRLF line ends, every line starting with a visible character
    (so no continuation lines and no blank-looking lines) and an empty line at the end.
    Returns None for anything else. Reading it with ``str.split`` gives the same result as
    warcio's line-by-line parser, several times faster; a property test checks this.
    """
    if not _SIMPLE_HEADER_BLOCK.fullmatch(raw):
        return None
    return _split_simple(raw)


def _split_simple(raw: bytes) -> HttpHead:
    """:func:`parse_simple_header_block` for a block known to be of the simple form.

    Only the status line is split here; headers are found when asked for (:class:`HttpHead`).
    """
    end = raw.index(b"\r\n")
    protocol_status = raw[:end].decode("ascii").rstrip().split(" ", 1)
    statusline = protocol_status[1].strip() if len(protocol_status) > 1 else ""
    return HttpHead(protocol_status[0], statusline, None, raw)


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


def parse_http_headers(block: Any) -> tuple[HttpHead | None, bytes, bytes]:
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
        head = buf[:used]
        return _split_simple(head), head, buf[used:]
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
            raise HeadersTooLong("HTTP headers longer than 1 MiB")
    http = HttpHead(parsed.protocol, parsed.statusline, parsed.headers)
    return http, buf[:used], buf[used:]


def mime_of(value: str | None) -> str | None:
    """Content type without parameters, split the way cdxj-indexer splits it."""
    if value:
        return _RE_MIME_SPLIT.split(value, 1)[0].strip()
    return value


def status_code_of(http: Any) -> int | None:
    code = http.statusline.split(" ", 1)[0]
    if code.isdigit() and len(code) <= 4:
        return int(code)
    return None
