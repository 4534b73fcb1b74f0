"""The warcio reader: slots of any WARC/ARC file, damaged or not, via warcio's parts.

Why here: this is the reader that never gives up on a file. It drives warcio's
``DecompressingBufferedReader`` and ``ArcWarcRecordLoader`` (what pywb and cdxj-indexer
use) itself, so offsets and lengths match pywb's, and turns every framing problem (whole-file
gzip, straddling or corrupt gzip members, truncation, wrong Content-Length, garbage between
records) into a slot error instead of an exception. See :mod:`citeaudit.archive.index.readers`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import IO, Any

from citeaudit.archive.index.slots import (
    BLOCK_SIZE,
    MAX_INFLATE,
    MAX_LINE,
    WANTED_HEADERS,
    Slot,
    looks_like_record_start,
    short_reason,
)


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
                if looks_like_record_start(text.split(b"\n", 1)[0] + b"\n"):
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
            if first and not looks_like_record_start(line):
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
            if looks_like_record_start(line):
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
                    err.add_error("unreadable_record: " + short_reason(exc))
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
            key = WANTED_HEADERS.get(name.lower())
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
