"""Cut points: gzip member boundaries at which one gzip-per-record WARC can be split.

Why here: splitting a large ``.warc.gz`` between processes needs offsets where a record's
gzip member ends and the next record's begins, found by scanning and inflating members near
chosen points. These are candidates only; :func:`citeaudit.archive.readers.fastwarc_slots`
confirms each cut while reading the ranges.
"""

from __future__ import annotations

import os
from typing import Any

from citeaudit.archive.index.slots import (
    BLOCK_SIZE,
    MAX_INFLATE,
    WANTED_HEADERS_BYTES,
    member_starts_record,
)

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
            if member_starts_record(fd, pos + idx):
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
        key = WANTED_HEADERS_BYTES.get(name.strip().lower()) if sep else None
        if key is not None and key not in fields:
            raw = value.strip()
            try:
                fields[key] = raw.decode("utf-8")
            except UnicodeDecodeError:
                fields[key] = raw.decode("iso-8859-1")
    return fields
