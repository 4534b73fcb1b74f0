"""SHA-256 in Python's hashlib over Arrow string columns (faster than DuckDB's sha256()).

Hashing is the only per-row Python work of validation; everything else is SQL. The column's
bytes are read from its Arrow buffers (no Python string per row) and the digests come back as
one fixed-width binary column (32 bytes a row, the form the lineage key table stores) and, in
a vectorized step, as lower-case hex (the form the record contract stores). Nulls stay null so
a missing content never becomes the digest of an empty string.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pyarrow as pa

DIGEST = pa.binary(32)
_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


def sha256_hex(text: str) -> str:
    """Lower-case hex SHA-256 of a string's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _validity(arr: pa.Array) -> pa.Buffer | None:
    """A zero-offset validity bitmap of ``arr`` (None when nothing is null)."""
    return arr.is_valid().buffers()[1] if arr.null_count else None


def sha256_binary(column: pa.ChunkedArray | pa.Array) -> pa.FixedSizeBinaryArray:
    """SHA-256 of every string (UTF-8 bytes) of a column, as 32-byte values; null stays null."""
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    n = len(arr)
    if n == 0:
        return pa.array([], DIGEST)
    if pa.types.is_null(arr.type):
        return pa.nulls(n, DIGEST)
    if arr.null_count == n:  # e.g. a snapshot text no record carries: nothing to hash
        return pa.FixedSizeBinaryArray.from_buffers(
            DIGEST, n, [_validity(arr), pa.py_buffer(bytes(DIGEST.byte_width * n))])
    if not pa.types.is_large_string(arr.type):
        arr = arr.cast(pa.string())
    width = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    buffers = arr.buffers()
    offsets = np.frombuffer(buffers[1], dtype=width)[arr.offset: arr.offset + n + 1].tolist()
    data = memoryview(buffers[2] if buffers[2] is not None else b"")
    sha = hashlib.sha256
    joined = b"".join([sha(data[offsets[i]:offsets[i + 1]]).digest() for i in range(n)])
    return pa.FixedSizeBinaryArray.from_buffers(DIGEST, n, [_validity(arr), pa.py_buffer(joined)])


def hex_column(digests: pa.FixedSizeBinaryArray) -> pa.StringArray:
    """Lower-case hex of fixed-width binary digests (vectorized); null stays null."""
    n, width = len(digests), digests.type.byte_width
    if n == 0:
        return pa.array([], pa.string())
    raw = np.frombuffer(digests.buffers()[1], dtype=np.uint8)[
        digests.offset * width: (digests.offset + n) * width]
    chars = np.empty(raw.size * 2, dtype=np.uint8)
    chars[0::2] = _HEX[raw >> 4]
    chars[1::2] = _HEX[raw & 15]
    offsets = np.arange(0, (n + 1) * 2 * width, 2 * width, dtype=np.int32)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(chars),
                                       _validity(digests))


def sha256_column(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """Hex SHA-256 of every string of a column (UTF-8 bytes); null stays null."""
    return hex_column(sha256_binary(column))


def canonical_json(obj: object) -> bytes:
    """Python's canonical JSON (sorted keys, no spaces, UTF-8), for raw-line digests."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
