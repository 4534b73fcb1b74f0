"""The FastWARC reader: slots of a well-framed WARC file, about twice as fast as warcio.

Why here: FastWARC's C++ iterator is fast but resynchronises silently over damage, so this
module accepts a file (or a byte range of one) only when every record passes framing
checks proving its offset and length are the ones warcio would report, and otherwise
raises :class:`~citeaudit.archive.slots.FastwarcRefused` so the caller falls back to warcio.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

from citeaudit.archive.index.slots import (
    BLOCK_SIZE,
    MAX_BLANK_SLACK,
    MAX_LINE,
    MEMBER_HEAD_BYTES,
    WANTED_HEADERS,
    WANTED_HEADERS_BYTES,
    WARC_VERSIONS,
    FastwarcRefused,
    Slot,
    member_head_starts_record,
    short_reason,
)


class _FastwarcBlock:
    """The content of one record through FastWARC's payload reader, counting bytes read."""

    __slots__ = ("_reader", "remaining", "short")

    def __init__(self, reader: Any, content_length: int) -> None:
        self._reader = reader
        self.remaining = content_length
        self.short = False

    def read(self, size: int = BLOCK_SIZE) -> bytes:
        if self.remaining <= 0:
            return b""
        data = self._reader.read(min(size, self.remaining))
        self.remaining -= len(data)
        if not data:
            self.short = True
        return data

    def readline(self, size: int = MAX_LINE) -> bytes:
        if self.remaining <= 0:
            return b""
        data = self._reader.readline(min(size, self.remaining))
        self.remaining -= len(data)
        if not data:
            self.short = True
        return data


def fastwarc_slots(
    path: str | os.PathLike[str], *, gz: bool, start: int = 0, end: int | None = None
) -> Iterator[Slot]:
    """Slots of a WARC file read with FastWARC; raises :class:`FastwarcRefused` when unsure.

    ``start``/``end`` read only the records in that byte range (for splitting one file
    between processes): the first record must start exactly at ``start`` and, unless ``end``
    is the end of the file, FastWARC must find the record after the last one exactly at
    ``end`` (which is read no further). Each record is checked as in a whole-file read, the
    last one against the record found at ``end``, so a range gives exactly the slots a
    whole-file read gives for those offsets, or a refusal.

    FastWARC resynchronises silently over damage and reports the start of the gzip member
    a record is found in, so its positions are checked against the bytes before a file is
    accepted. For each record (read or skipped by the consumer):

    * the version line is one warcio accepts, the first record starts at offset 0 and
      offsets strictly increase (a whole-file gzip repeats offsets);
    * gzip: the member at ``offset`` starts with the gzip magic and the member that ends
      where the next record starts (or at end of file) has an ISIZE between header +
      Content-Length and that + 68 (the CRLF CRLF and a few extra blank bytes, which
      FastWARC checks are blank), i.e. it holds exactly this record (not a straddling or
      truncated record), and the member's data starts with ``WARC/``;
    * uncompressed: the header block really ends where its parsed size says, and only CR/LF
      bytes (at most 64) lie between the end of the content and the next record (or the
      end of the file); FastWARC itself raises on anything else there;
    * a consumer that reads the block gets exactly Content-Length bytes.

    The header size is computed as ``version CRLF (name ": " value CRLF)* CRLF``; a header
    block spelled any other way fails these checks and goes to warcio (safe, only slower).

    Any exception from FastWARC (ARC input, bad headers, ...) is also a refusal.
    """
    from fastwarc.warc import ArchiveIterator

    size = os.path.getsize(path)
    bounded = end is not None and end < size
    if bounded and not 0 <= start < end:
        raise ValueError(f"empty or inverted byte range {start}-{end}")
    with open(path, "rb") as fh:
        fd = fh.fileno()
        if start:
            fh.seek(start)
        try:
            records = iter(ArchiveIterator(fh, parse_http=False))
        except Exception as exc:
            raise FastwarcRefused(short_reason(exc)) from exc
        prev: Slot | None = None
        prev_end = 0  # uncompressed: offset just after prev's content
        prev_size = 0  # gzip: expected ISIZE of prev's member
        # gzip: the first compressed bytes of prev's member (read with the trailer before it)
        prev_head = os.pread(fd, MEMBER_HEAD_BYTES, start) if gz else b""
        while True:
            try:
                rec = next(records)
            except StopIteration:
                break
            except Exception as exc:
                raise FastwarcRefused(short_reason(exc)) from exc
            pos = rec.stream_pos
            if prev is None:
                if pos != start:
                    raise FastwarcRefused(f"first record at offset {pos}, not {start}")
            else:
                prev_head = _fastwarc_close(prev, pos, fd, gz, prev_end, prev_size, prev_head)
            if bounded and pos >= end:  # the first record of the next range
                if pos != end:
                    raise FastwarcRefused(f"no record starts at the range end {end}")
                return
            headers = rec.headers
            version = headers.status_line_bytes or b""
            if version not in WARC_VERSIONS:
                raise FastwarcRefused(f"unsupported version line {version[:20]!r}")
            header_size, fields = _warc_fields(headers, version)
            try:
                content_length = int(fields.get("content_length", ""))
            except ValueError:
                raise FastwarcRefused("missing or invalid Content-Length") from None
            if content_length < 0:
                raise FastwarcRefused("negative Content-Length")
            if not gz and os.pread(fd, 4, pos + header_size - 4) != b"\r\n\r\n":
                raise FastwarcRefused(f"WARC header at {pos} not written canonically")
            rec_type = fields.get("type")
            slot = Slot(pos, "warc", rec_type, fields, None, content_length, first_line=version)
            block = _FastwarcBlock(rec.reader, content_length)
            slot.block = block
            yield slot
            if block.short:
                raise FastwarcRefused(f"record at {pos} shorter than its Content-Length")
            prev = slot
            prev_end = pos + header_size + content_length
            prev_size = header_size + content_length
        if bounded:
            raise FastwarcRefused(f"records end before the range end {end}")
        if prev is None:
            if size:
                raise FastwarcRefused("no WARC records found")
            return
        _fastwarc_close(prev, size, fd, gz, prev_end, prev_size, prev_head)


_WANTED_LINE = re.compile(
    "\r\n(" + "|".join(re.escape(name) for name in WANTED_HEADERS) + "): ([^\r\n]*)",
    re.IGNORECASE,
)


_SPELLINGS = (
    "WARC-Type", "WARC-Target-URI", "WARC-Date", "WARC-Record-ID", "WARC-Payload-Digest",
    "WARC-Block-Digest", "WARC-Refers-To-Target-URI", "WARC-Refers-To-Date", "WARC-Truncated",
    "Content-Type", "WARC-Concurrent-To", "Content-Length",
)
_KEY_OF_NAME = {name: WANTED_HEADERS[name.lower()] for name in _SPELLINGS} | WANTED_HEADERS
"""Wanted header names as the WARC standard spells them (and in lower case) -> field key."""


def _warc_fields(headers: Any, version: bytes) -> tuple[int, dict[str, str]]:
    """The header block's size as ``version CRLF (name ": " value CRLF)* CRLF`` and the
    wanted fields (:data:`WANTED_HEADERS` keys; the first of repeated names wins).

    An ASCII block is read from FastWARC's own rendering of it, which is that spelling (one
    call instead of one per header), its wanted lines found by one regex; anything else
    (non-ASCII bytes, a value holding a CR or LF) goes through the headers one by one,
    values decoded as UTF-8, else Latin-1.
    """
    text = str(headers)
    lines = len(headers) + 2
    if (
        text.isascii()
        and text.count("\n") == lines
        and text.count("\r") == lines
        and text.count("\r\n") == lines
        and text.startswith(version.decode() + "\r\n")
    ):
        found = _WANTED_LINE.findall(text)
        found.reverse()  # a dict keeps the last value written: the first of repeated names
        try:
            fields = {_KEY_OF_NAME[name]: value for name, value in found}
        except KeyError:  # a wanted name spelled in another case
            fields = {WANTED_HEADERS[name.lower()]: value for name, value in found}
        return len(text), fields
    fields: dict[str, str] = {}
    header_size = len(version) + 4
    for raw_name, raw_value in headers.items_bytes():
        header_size += len(raw_name) + len(raw_value) + 4
        key = WANTED_HEADERS_BYTES.get(raw_name.lower())
        if key is not None and key not in fields:
            try:
                fields[key] = raw_value.decode("utf-8")
            except UnicodeDecodeError:
                fields[key] = raw_value.decode("iso-8859-1")
    return header_size, fields


def _fastwarc_close(
    slot: Slot, next_pos: int, fd: int, gz: bool, end: int, isize: int, head: bytes
) -> bytes:
    """Check the framing of ``slot`` given where the next record starts; set its length.

    ``end`` is where the record's content ends (uncompressed files), ``isize`` the
    uncompressed size of header plus content and ``head`` the first compressed bytes of
    the record's member (gzip files). Up to 64 blank bytes after a record are accepted
    (CRLF CRLF, or fewer, or a few more), as warcio accepts them: FastWARC raises on
    anything else there. Returns the first compressed bytes of the next member (gzip): its
    trailer and the next member's head are one read.
    """
    if next_pos <= slot.offset:
        raise FastwarcRefused(
            f"record offsets do not increase at {slot.offset} (whole-file gzip?)"
        )
    following = b""
    if gz:
        if not member_head_starts_record(head):
            raise FastwarcRefused(f"no gzip member starting with a record at {slot.offset}")
        read = os.pread(fd, 4 + MEMBER_HEAD_BYTES, next_pos - 4)
        trailer, following = read[:4], read[4:]
        extra = (int.from_bytes(trailer, "little") - isize) & 0xFFFFFFFF
        if len(trailer) != 4 or extra > MAX_BLANK_SLACK:
            raise FastwarcRefused(f"gzip member at {slot.offset} does not hold exactly one record")
        slot.length = next_pos - slot.offset
    else:
        gap = next_pos - end
        if not 0 <= gap <= MAX_BLANK_SLACK or os.pread(fd, gap, end).strip(b"\r\n"):
            raise FastwarcRefused(f"record at {slot.offset} not followed by blank lines only")
        slot.length = end - slot.offset
    slot.closed = True
    return following
