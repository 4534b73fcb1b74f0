"""What both WARC/ARC readers share: the :class:`Slot` they hand out and framing basics.

Why here: :mod:`.warcio_reader` and :mod:`.fastwarc_reader` give the consumer the same
:class:`Slot` objects, recognise the same record starts and WARC header names, and sniff files
the same way; the cut scan in :mod:`.gzip_cuts` uses the same gzip checks. See :mod:`.readers`
for how the readers fill a slot.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

BLOCK_SIZE = 64 * 1024
"""Read size for record blocks and for warcio's decompressing buffer."""

MAX_LINE = 64 * 1024
"""Longest line read in one call while looking for a record start (memory cap)."""

MAX_BLANK_SLACK = 64
"""Most extra CR/LF bytes after a record that FastWARC's framing check lets through."""

WARC_VERSIONS = (b"WARC/1.1", b"WARC/1.0", b"WARC/0.17", b"WARC/0.18")
"""WARC versions warcio accepts; fastwarc is refused files with any other version line."""

# Keys of Slot.headers, from the (case-insensitive) WARC header names.
WANTED_HEADERS = {
    "warc-type": "type",
    "warc-target-uri": "uri",
    "warc-date": "date",
    "warc-record-id": "id",
    "warc-payload-digest": "payload_digest",
    "warc-block-digest": "block_digest",
    "warc-refers-to-target-uri": "refers_uri",
    "warc-refers-to-date": "refers_date",
    "warc-truncated": "truncated",
    "content-type": "content_type",
    "warc-concurrent-to": "concurrent_to",
    "content-length": "content_length",
}

WANTED_HEADERS_BYTES = {name.encode(): key for name, key in WANTED_HEADERS.items()}

# An ARC v1 record header line: URL IP-address Archive-date Content-type Archive-length
_ARC_LINE = re.compile(rb"^\S.* \S+ \d{12,} \S* -?\w+\r?\n?$")


class FastwarcRefused(Exception):
    """FastWARC cannot index this file with offsets identical to warcio's: use warcio."""


@dataclass(slots=True, eq=False)
class Slot:
    """One record (or one unreadable stretch) of a WARC/ARC file, as handed to the consumer.

    ``kind`` is ``"warc"``, ``"arc"`` or ``"error"`` (bytes that could not be parsed as a
    record; ``errors`` says why). ``offset``/``length`` follow pywb: for gzip files the
    compressed offset of the gzip member holding the record and the compressed length up to
    the end of the member; for uncompressed files the offset of the record's first line and
    the length of header plus Content-Length bytes (without the blank lines after it).
    """

    offset: int
    kind: str
    rec_type: str | None
    headers: dict[str, str]
    block: Any
    content_length: int | None
    first_line: bytes = b""
    length: int | None = None
    errors: list[str] = field(default_factory=list)
    truncated: bool = False
    closed: bool = False
    row: list | None = None

    def add_error(self, code: str) -> None:
        """Record a framing problem once."""
        if code not in self.errors:
            self.errors.append(code)


def sniff_compression(path: str | os.PathLike[str]) -> str:
    """Return the file's compression from its magic bytes.

    One of ``"gzip"``, ``"none"``, ``"empty"``, or an unsupported kind (``"lz4"``,
    ``"zstd"``, ``"bzip2"``, ``"xz"``), which pywb and warcio cannot index.
    """
    with open(path, "rb") as fh:
        head = fh.read(6)
    if not head:
        return "empty"
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    if head[:4] == b"\x04\x22\x4d\x18":
        return "lz4"
    if head[:4] == b"\x28\xb5\x2f\xfd":
        return "zstd"
    if head[:3] == b"BZh":
        return "bzip2"
    if head == b"\xfd7zXZ\x00":
        return "xz"
    return "none"


def looks_like_record_start(line: bytes) -> bool:
    """True for a WARC version line or an ARC v1 header line (used to resynchronise)."""
    return line.startswith(WARC_VERSIONS) or bool(_ARC_LINE.match(line))


def short_reason(exc: BaseException) -> str:
    """A one-line, bounded description of a parse failure for the ``error`` column."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:160]


MAX_INFLATE = 1 << 20
"""Most decompressed bytes produced from one read (highly compressible data stays bounded)."""


MEMBER_HEAD_BYTES = 1024
"""Compressed bytes read at a gzip member's start to see whether its data starts a record."""


def member_starts_record(fd: int, offset: int) -> bool:
    """True if a gzip member starts at ``offset`` and its data starts with ``WARC/``."""
    return member_head_starts_record(os.pread(fd, MEMBER_HEAD_BYTES, offset))


def member_head_starts_record(head: bytes) -> bool:
    """:func:`member_starts_record` given the first :data:`MEMBER_HEAD_BYTES` of the member."""
    import zlib

    if head[:2] != b"\x1f\x8b":
        return False
    try:
        if head[2:4] == b"\x08\x00":  # deflate, no optional fields: a 10-byte gzip header
            return zlib.decompressobj(-15).decompress(head[10:], 5) == b"WARC/"
        return zlib.decompressobj(31).decompress(head, 5) == b"WARC/"
    except zlib.error:
        return False


def starts_as_warc(path: str, gz: bool) -> bool:
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
