"""SHA-256 in Python's hashlib over Arrow string columns (faster than DuckDB's sha256()).

Hashing is the only per-row Python work of validation; everything else is SQL. Nulls stay
null so a missing content never becomes the digest of an empty string.
"""

from __future__ import annotations

import hashlib
import json

import pyarrow as pa


def sha256_hex(text: str) -> str:
    """Lower-case hex SHA-256 of a string's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_column(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """Hex SHA-256 of every string of a column (UTF-8 bytes); null stays null."""
    sha = hashlib.sha256
    values = column.to_pylist()
    return pa.array([None if v is None else sha(v.encode()).hexdigest() for v in values],
                    type=pa.string())


def canonical_json(obj: object) -> bytes:
    """Python's canonical JSON (sorted keys, no spaces, UTF-8), for raw-line digests."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
