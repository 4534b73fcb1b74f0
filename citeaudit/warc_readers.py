"""Two streaming WARC/ARC readers with one interface, for :mod:`citeaudit.warc_index`.

Both readers turn a file into a sequence of :class:`Slot` objects, one per record (or per
unreadable stretch of bytes). A slot carries the record's offset, its WARC headers and a
``block`` stream over the record's content. The consumer reads (part of) the block while it
holds the slot; when it asks for the next slot, the reader finishes the previous record:
it drains what the consumer left, works out the record's ``length`` (exactly as pywb and
cdxj-indexer do) and attaches framing problems (``errors``, ``truncated``). A slot is
final once ``closed`` is true; for gzip files that can be later than the next slot, since
the length of a record is only known when its gzip member ends.

* :func:`warcio_slots` is built from warcio's own parts (``DecompressingBufferedReader`` and
  ``ArcWarcRecordLoader``: the ones pywb and cdxj-indexer use) but drives them itself, so
  that a bad record or a bad gzip layout becomes a slot with an error instead of ending the
  file: whole-file gzip, records that straddle gzip members, truncation, wrong
  Content-Length, garbage between records. It reads WARC and ARC.
* :func:`fastwarc_slots` uses FastWARC's C++ iterator (its bare read loop is ~2x warcio's),
  for WARC files only.
  It accepts a file only if every record passes framing checks that prove the offsets and
  lengths are the ones warcio would report (see :func:`fastwarc_slots`); otherwise it raises
  :class:`FastwarcRefused` and the caller falls back to warcio. So both readers give the
  same rows for any file that fastwarc accepts.

Memory stays flat: lines are read with a cap, blocks are streamed in 64 KiB pieces.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

BLOCK_SIZE = 64 * 1024
"""Read size for record blocks and for warcio's decompressing buffer."""

MAX_LINE = 64 * 1024
"""Longest line read in one call while looking for a record start (memory cap)."""

MAX_BLANK_SLACK = 64
"""Most extra CR/LF bytes after a record that FastWARC's framing check lets through."""

WARC_VERSIONS = (b"WARC/1.1", b"WARC/1.0", b"WARC/0.17", b"WARC/0.18")
"""WARC versions warcio accepts; fastwarc is refused files with any other version line."""

# Keys of Slot.headers, from the (case-insensitive) WARC header names.
_WANTED_HEADERS = {
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

_WANTED_HEADERS_BYTES = {name.encode(): key for name, key in _WANTED_HEADERS.items()}

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
    row: dict | None = None

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


def _looks_like_record_start(line: bytes) -> bool:
    """True for a WARC version line or an ARC v1 header line (used to resynchronise)."""
    return line.startswith(WARC_VERSIONS) or bool(_ARC_LINE.match(line))


def _short_reason(exc: BaseException) -> str:
    """A one-line, bounded description of a parse failure for the ``error`` column."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:160]


# ---------------------------------------------------------------------------------------------
# warcio
# ---------------------------------------------------------------------------------------------


class _WarcioBlock:
    """The content of one record, read through warcio's LimitReader.

    If a gzip member ends before Content-Length bytes were read and another member follows,
    it carries on in that member (the record straddles members: ``misaligned_gzip_member``)
    so the digest still covers the whole content; if the file ends, it reports a short read
    (``truncated_record``).
    """

    __slots__ = ("_lr", "_walker", "_slot", "short")

    def __init__(self, limit_reader: Any, walker: _WarcioWalker, slot: Slot) -> None:
        self._lr = limit_reader
        self._walker = walker
        self._slot = slot
        self.short = False

    def read(self, size: int = BLOCK_SIZE) -> bytes:
        if self.short:
            return b""
        data = self._lr.read(size)
        while not data and self._lr.limit > 0 and self._cross_member():
            data = self._lr.read(size)
        return data

    def readline(self, size: int = MAX_LINE) -> bytes:
        if self.short:
            return b""
        data = self._lr.readline(size)
        while not data and self._lr.limit > 0 and self._cross_member():
            data = self._lr.readline(size)
        return data

    def _cross_member(self) -> bool:
        if self._walker.next_member(crossing=self._slot):
            self._slot.add_error("misaligned_gzip_member")
            return True
        self.short = True
        return False

    @property
    def remaining(self) -> int:
        return self._lr.limit


MAX_INFLATE = 1 << 20
"""Most decompressed bytes produced from one read (highly compressible data stays bounded)."""


def _gzip_reader_class() -> type:
    """warcio's DecompressingBufferedReader with two changes for robustness.

    * Decompression is capped at ``MAX_INFLATE`` bytes per step (the rest of the input is
      kept for the next step), so a highly compressible record cannot blow up memory:
      warcio inflates a whole 64 KiB read at once (up to ~64 MiB).
    * On corrupt deflate data warcio logs every following block to stderr and reads to the
      end of the file; this reader flags the member as corrupt and stops, so the walker can
      resynchronise at the next gzip member.
    """
    import io
    import zlib

    from warcio.bufferedreaders import DecompressingBufferedReader

    class _GzipReader(DecompressingBufferedReader):
        corrupt = False
        _tail = b""

        def _decompress(self, data: bytes) -> bytes:
            if not data or self.decompressor is None:
                return data
            try:
                out = self.decompressor.decompress(data, MAX_INFLATE)
            except zlib.error:
                self.corrupt = True
                self.stream = io.BytesIO()
                return b""
            self._tail = self.decompressor.unconsumed_tail
            return out

        def _fillbuff(self, block_size: int | None = None) -> None:
            if self._tail and self.empty():
                tail, self._tail = self._tail, b""
                self._process_read(tail)
                if not self.empty():
                    return
            super()._fillbuff(block_size)

    return _GzipReader


class _WarcioWalker:
    """Walks a WARC/ARC file record by record with warcio's reader and record loader."""

    def __init__(self, fh: IO[bytes], gz: bool) -> None:
        from warcio.bufferedreaders import BufferedReader
        from warcio.recordloader import ArcWarcRecordLoader

        self.fh = fh
        self.fd = fh.fileno()
        self.size = os.fstat(self.fd).st_size
        self.gz = gz
        self._gzip_reader = _gzip_reader_class() if gz else None
        if self._gzip_reader is not None:
            self.br = self._gzip_reader(fh, block_size=BLOCK_SIZE)
        else:
            self.br = BufferedReader(fh, block_size=BLOCK_SIZE)
        self.loader = ArcWarcRecordLoader(verify_http=False, arc2warc=True)
        self.member_start = 0
        self.member_records = 0
        self.open_slots: list[Slot] = []
        self.error_slots: list[Slot] = []  # corrupt members found while stepping members

    # -- positions ------------------------------------------------------------------------------
    def _buffered(self) -> int:
        buff = self.br.buff
        return self.br.buff_size - buff.tell() if buff is not None else 0

    def raw_pos(self) -> int:
        """Offset in the file of the next unread byte (uncompressed files only)."""
        return self.fh.tell() - self.br.rem_length()

    def member_pos(self) -> int:
        """Decompressed bytes consumed so far in the current gzip member."""
        return self.br.num_block_read - self._buffered()

    def _member_end(self) -> int:
        unused = self.br.decompressor.unused_data if self.br.decompressor else b""
        return self.fh.tell() - len(unused)

    # -- gzip members ---------------------------------------------------------------------------
    def next_member(self, crossing: Slot | None = None) -> bool:
        """At the end of a gzip member: close the slots it holds and step into the next one.

        ``crossing`` is the slot whose content continues into the next member; it stays open
        (unless the member turns out to be corrupt). Returns False at the end of the file
        and for uncompressed files. A member whose deflate data is corrupt (warcio then stops
        decompressing) is skipped: its slots get ``corrupt_gzip_member`` and reading resumes
        at the next offset where a gzip member really starts.
        """
        if not self.gz:
            return False
        end = self._member_end()
        if self.br.read_next_member():
            self._close_member(end, keep=crossing)
            self.member_start = end
            self.member_records = 0
            return True
        if not getattr(self.br, "corrupt", False):
            self._close_member(end, keep=crossing)
            return False
        restart = self._find_member(self.member_start + 1)
        end = restart if restart is not None else self.size
        for slot in self.open_slots:
            slot.add_error("corrupt_gzip_member")
        if not self.open_slots:  # nothing to pin the damage on: report it on its own
            bad = Slot(self.member_start, "error", None, {}, None, None)
            bad.add_error("corrupt_gzip_member")
            bad.length, bad.closed = end - self.member_start, True
            self.error_slots.append(bad)
        self._close_member(end)
        if restart is None:
            return False
        self._restart_at(restart)
        # a record cut by the corruption must not continue into the next member
        return crossing is None

    def _find_member(self, start: int) -> int | None:
        """Offset of the next place at or after ``start`` where a gzip member decodes."""
        import zlib

        pos = start
        while pos < self.size:
            chunk = os.pread(self.fd, BLOCK_SIZE + 2, pos)
            if len(chunk) < 3:
                return None
            idx = chunk.find(b"\x1f\x8b\x08")
            while idx != -1:
                probe = os.pread(self.fd, 4096, pos + idx)
                try:
                    text = zlib.decompressobj(31).decompress(probe).lstrip(b"\r\n")
                except zlib.error:
                    text = b""
                if _looks_like_record_start(text.split(b"\n", 1)[0] + b"\n"):
                    return pos + idx
                idx = chunk.find(b"\x1f\x8b\x08", idx + 1)
            pos += BLOCK_SIZE
        return None

    def _restart_at(self, pos: int) -> None:
        self.fh.seek(pos)
        self.br = self._gzip_reader(self.fh, block_size=BLOCK_SIZE)
        self.member_start = pos
        self.member_records = 0

    def _close_member(self, end: int, keep: Slot | None = None) -> None:
        still_open = []
        for slot in self.open_slots:
            if slot is keep:
                still_open.append(slot)
                continue
            slot.length = end - slot.offset
            slot.closed = True
        self.open_slots = still_open

    # -- lines --------------------------------------------------------------------------------
    def _readline(self) -> bytes:
        return self.br.readline(MAX_LINE)

    def next_start_line(self, after_record: Slot | None) -> bytes | None:
        """Skip blank lines (and, like warcio, one stray line right after a record).

        Returns the first line of the next record, or None at the end of the member or file.
        A stray non-blank line straight after a record means its Content-Length was wrong.
        """
        first = after_record is not None
        while True:
            line = self._readline()
            if not line:
                return None
            if not line.rstrip():
                first = False
                continue
            if first and not _looks_like_record_start(line):
                after_record.add_error("content_length_mismatch")
                first = False
                continue
            return line

    def resync_line(self) -> bytes | None:
        """After a parse failure: read on (across gzip members) to the next record start."""
        while True:
            line = self._readline()
            if not line:
                if self.next_member():
                    continue
                return None
            if _looks_like_record_start(line):
                return line

    # -- main loop -----------------------------------------------------------------------------
    def __iter__(self) -> Iterator[Slot]:
        prev: Slot | None = None
        err: Slot | None = None
        line: bytes | None = None
        while True:
            if line is None:
                line = self.next_start_line(prev)
                prev = None
            while self.error_slots:
                yield self.error_slots.pop(0)
            if line is None:
                if self.next_member():
                    continue
                break
            start_in_member = self.member_pos() - len(line) if self.gz else 0
            offset = self.member_start if self.gz else self.raw_pos() - len(line)
            try:
                record = self.loader.parse_record_stream(self.br, line, None, True)
            except Exception as exc:  # any parse failure becomes an error slot
                if err is None:
                    err = Slot(offset, "error", None, {}, None, None, first_line=line[:200])
                    err.add_error("unreadable_record: " + _short_reason(exc))
                    yield err
                line = self.resync_line()
                if line is None:
                    end = self._member_end() if self.gz else self.raw_pos()
                    err.length, err.closed = end - err.offset, True
                    self._close_member(end)
                    yield from self.error_slots
                    return
                continue
            if err is not None:
                err.length, err.closed = offset - err.offset, True
                err = None

            slot = self._make_slot(record, line, offset)
            if self.gz:
                if start_in_member > 0:
                    if self.member_records:
                        slot.add_error("whole_file_gzip")
                        for other in self.open_slots:
                            other.add_error("whole_file_gzip")
                    else:
                        slot.add_error("misaligned_gzip_member")
                self.member_records += 1
                self.open_slots.append(slot)
            yield slot

            self._drain(slot)
            if not self.gz:
                slot.length = self.raw_pos() - slot.offset
                slot.closed = True
            prev = slot
            line = None
        end = self._member_end() if self.gz else self.raw_pos()
        if err is not None and not err.closed:
            err.length, err.closed = end - err.offset, True
        self._close_member(end)
        yield from self.error_slots

    def _make_slot(self, record: Any, line: bytes, offset: int) -> Slot:
        kind = "warc" if line.startswith(b"WARC/") else "arc"
        headers: dict[str, str] = {}
        for name, value in record.rec_headers.headers:
            key = _WANTED_HEADERS.get(name.lower())
            if key is not None and key not in headers:
                headers[key] = value
        length = record.length
        slot = Slot(offset, kind, record.rec_type, headers, None, length, first_line=line)
        try:
            valid_length = int(headers.get("content_length", "")) >= 0
        except ValueError:
            valid_length = False
        if not valid_length:
            self.br._fillbuff()
            if self.br.empty():  # the data ended inside the header block
                slot.truncated = True
                slot.add_error("truncated_record")
            else:  # warcio reads a missing, negative or non-numeric length as "no content"
                slot.add_error("invalid_content_length")
        if length is None:
            slot.content_length = 0
            from warcio.limitreader import LimitReader

            record.raw_stream = LimitReader(self.br, 0)
        slot.block = _WarcioBlock(record.raw_stream, self, slot)
        return slot

    def _drain(self, slot: Slot) -> None:
        block = slot.block
        while block.read(BLOCK_SIZE):
            pass
        if block.short:
            slot.truncated = True
            slot.add_error("truncated_record")


def warcio_slots(fh: IO[bytes], *, gz: bool) -> Iterator[Slot]:
    """Slots of a WARC or ARC file read with warcio (``gz``: the file is gzip-compressed).

    Never raises on bad content: unparseable stretches come back as ``kind="error"`` slots
    and the walk resumes at the next line that starts a record (crossing gzip members).
    """
    return iter(_WarcioWalker(fh, gz))


# ---------------------------------------------------------------------------------------------
# fastwarc
# ---------------------------------------------------------------------------------------------


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
            raise FastwarcRefused(_short_reason(exc)) from exc
        prev: Slot | None = None
        prev_end = 0  # uncompressed: offset just after prev's content
        prev_size = 0  # gzip: expected ISIZE of prev's member
        while True:
            try:
                rec = next(records)
            except StopIteration:
                break
            except Exception as exc:
                raise FastwarcRefused(_short_reason(exc)) from exc
            pos = rec.stream_pos
            if prev is None:
                if pos != start:
                    raise FastwarcRefused(f"first record at offset {pos}, not {start}")
            else:
                _fastwarc_close(prev, pos, fd, gz, prev_end, prev_size)
            if bounded and pos >= end:  # the first record of the next range
                if pos != end:
                    raise FastwarcRefused(f"no record starts at the range end {end}")
                return
            headers = rec.headers
            version = headers.status_line_bytes or b""
            if version not in WARC_VERSIONS:
                raise FastwarcRefused(f"unsupported version line {version[:20]!r}")
            fields: dict[str, str] = {}
            header_size = len(version) + 4
            for raw_name, raw_value in headers.items_bytes():
                header_size += len(raw_name) + len(raw_value) + 4
                key = _WANTED_HEADERS_BYTES.get(raw_name.lower())
                if key is not None and key not in fields:
                    try:
                        fields[key] = raw_value.decode("utf-8")
                    except UnicodeDecodeError:
                        fields[key] = raw_value.decode("iso-8859-1")
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
        _fastwarc_close(prev, size, fd, gz, prev_end, prev_size)


def _member_starts_record(fd: int, offset: int) -> bool:
    """True if a gzip member starts at ``offset`` and its data starts with ``WARC/``."""
    import zlib

    head = os.pread(fd, 1024, offset)
    if head[:2] != b"\x1f\x8b":
        return False
    try:
        return zlib.decompressobj(31).decompress(head, 5) == b"WARC/"
    except zlib.error:
        return False


def _fastwarc_close(slot: Slot, next_pos: int, fd: int, gz: bool, end: int, isize: int) -> None:
    """Check the framing of ``slot`` given where the next record starts; set its length.

    ``end`` is where the record's content ends (uncompressed files), ``isize`` the
    uncompressed size of header plus content (gzip files). Up to 64 blank bytes after a
    record are accepted (CRLF CRLF, or fewer, or a few more), as warcio accepts them:
    FastWARC raises on anything else there.
    """
    if next_pos <= slot.offset:
        raise FastwarcRefused(
            f"record offsets do not increase at {slot.offset} (whole-file gzip?)"
        )
    if gz:
        if not _member_starts_record(fd, slot.offset):
            raise FastwarcRefused(f"no gzip member starting with a record at {slot.offset}")
        trailer = os.pread(fd, 4, next_pos - 4)
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


# ---------------------------------------------------------------------------------------------
# cut points for splitting one gzip WARC between processes
# ---------------------------------------------------------------------------------------------

GZIP_MEMBER_MAGIC = b"\x1f\x8b\x08"
"""The first bytes of a gzip member (ID1, ID2, CM=deflate)."""

CUT_SCAN_BUDGET = 16 << 20
"""Most compressed bytes read while looking for one cut point (past that: no cut there)."""

_HEAD_KEEP = 16 * 1024  # decompressed bytes kept to read a record's WARC header block


def gzip_record_cuts(
    path: str | os.PathLike[str],
    near: list[int],
    *,
    can_cut: Any = None,
    budget: int = CUT_SCAN_BUDGET,
) -> list[int]:
    """Offsets at which a gzip-per-record WARC can be cut into ranges, one near each point.

    For each point, scans forward for a gzip member header (``1f 8b 08``) whose member
    decompresses to data starting with ``WARC/``, inflates that member completely (CRC and
    size checked by zlib) to find where it ends, and takes that end as the cut if another
    member starting with ``WARC/`` begins exactly there and ``can_cut(fields_before,
    fields_after)`` accepts the two records' WARC headers (a dict keyed like
    :attr:`Slot.headers`; used to avoid cutting between a request and its response). If
    not, it steps on to the next member, within ``budget`` compressed bytes of the point.

    Returns the sorted distinct cuts strictly inside the file (none for a point where no
    cut was found). These are candidates only: :func:`fastwarc_slots` must still confirm,
    when reading the ranges, that each cut is where a record starts in a sequential read.
    """
    size = os.path.getsize(path)
    cuts: set[int] = set()
    with open(path, "rb") as fh:
        fd = fh.fileno()
        for point in near:
            cut = _find_cut(fd, size, max(point, 0), can_cut, budget)
            if cut is not None and 0 < cut < size:
                cuts.add(cut)
    return sorted(cuts)


def _find_cut(fd: int, size: int, point: int, can_cut: Any, budget: int) -> int | None:
    stop = min(size, point + budget)
    member = _next_record_member(fd, point, stop)
    while member is not None and member < stop:
        found = _inflate_member(fd, member, stop)
        if found is None:
            return None
        end, head = found
        if end >= size:
            return None
        next_head = _member_head(fd, end)
        if next_head is None:
            return None  # a member that is not followed by a record member: do not cut here
        before, after = _warc_fields(head), _warc_fields(next_head)
        if before is not None and after is not None and (
            can_cut is None or can_cut(before, after)
        ):
            return end
        member = end
    return None


def _next_record_member(fd: int, start: int, stop: int) -> int | None:
    """Offset of the first gzip member at or after ``start`` whose data starts a record."""
    pos = start
    while pos < stop:
        chunk = os.pread(fd, BLOCK_SIZE + 2, pos)
        if len(chunk) < 3:
            return None
        idx = chunk.find(GZIP_MEMBER_MAGIC)
        while idx != -1 and idx < BLOCK_SIZE:
            if _member_starts_record(fd, pos + idx):
                return pos + idx
            idx = chunk.find(GZIP_MEMBER_MAGIC, idx + 1)
        pos += BLOCK_SIZE
    return None


def _inflate_member(fd: int, offset: int, stop: int) -> tuple[int, bytes] | None:
    """``(end offset, first decompressed bytes)`` of the gzip member at ``offset``.

    None if the member is damaged or does not end before ``stop``. zlib checks the CRC-32
    and ISIZE trailer before it reports the end, so the member is known to be intact.
    """
    import zlib

    inflater = zlib.decompressobj(31)
    head = bytearray()
    pos = offset
    try:
        while pos < stop:
            chunk = os.pread(fd, min(BLOCK_SIZE, stop - pos), pos)
            if not chunk:
                return None
            pos += len(chunk)
            data = chunk
            while True:
                out = inflater.decompress(data, MAX_INFLATE)
                if len(head) < _HEAD_KEEP:
                    head += out[: _HEAD_KEEP - len(head)]
                if inflater.eof:
                    return pos - len(inflater.unused_data), bytes(head)
                data = inflater.unconsumed_tail
                if not data:
                    break
    except zlib.error:
        return None
    return None


def _member_head(fd: int, offset: int) -> bytes | None:
    """The first decompressed bytes of the gzip member at ``offset`` if they start a record."""
    import zlib

    raw = os.pread(fd, _HEAD_KEEP, offset)
    if raw[:3] != GZIP_MEMBER_MAGIC:
        return None
    try:
        head = zlib.decompressobj(31).decompress(raw, _HEAD_KEEP)
    except zlib.error:
        return None
    return head if head.startswith(b"WARC/") else None


def _warc_fields(head: bytes) -> dict[str, str] | None:
    """The wanted WARC headers of a record from its first bytes (None: no complete block)."""
    end = head.find(b"\r\n\r\n")
    if not head.startswith(b"WARC/") or end < 0:
        return None
    fields: dict[str, str] = {}
    for line in head[:end].split(b"\r\n")[1:]:
        name, sep, value = line.partition(b":")
        key = _WANTED_HEADERS_BYTES.get(name.strip().lower()) if sep else None
        if key is not None and key not in fields:
            raw = value.strip()
            try:
                fields[key] = raw.decode("utf-8")
            except UnicodeDecodeError:
                fields[key] = raw.decode("iso-8859-1")
    return fields
