"""The capture table's schema and the small helpers that build its rows.

Why here: :data:`CAPTURE_SCHEMA` is the contract between the indexer, the CDXJ writer, the
parallel driver and everything downstream; keeping it (with the reader names and the
single-row/error helpers) in one dependency-free module lets each of them import it alone.
"""

from __future__ import annotations

import array
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from operator import itemgetter
from typing import Any

import numpy as np
import pyarrow as pa

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

ORIGINS = ("supplied", "fetched")
CAPTURES_TABLE_SCHEMA = CAPTURE_SCHEMA.append(pa.field("origin", pa.string()))
"""The ``captures`` table: the index rows plus ``origin``, ``supplied`` for WARCs somebody
else made, ``fetched`` for those citeaudit's own crawl wrote, ``archive:<name>`` for captures
it copied from the web archive of that name."""


def with_origin(table: pa.Table, origin: str) -> pa.Table:
    """The index rows with their ``origin`` column (one of :data:`ORIGINS`, or
    ``archive:<name>``)."""
    assert origin in ORIGINS or origin.startswith("archive:")
    return table.append_column(CAPTURES_TABLE_SCHEMA.field("origin"),
                               pa.array([origin] * table.num_rows, pa.string()))


CAPTURE_COLUMNS = CAPTURE_SCHEMA.names

READERS = ("auto", "warcio", "fastwarc")


def join_errors(codes: Iterable[str]) -> str | None:
    seen: list[str] = []
    for code in codes:
        if code not in seen:
            seen.append(code)
    return ";".join(seen) if seen else None


def single_row_table(name: str, offset: int, error: str, length: int | None = None) -> pa.Table:
    row = dict.fromkeys(CAPTURE_COLUMNS, None) | {
        "file": name, "offset": offset, "length": length, "error": error,
    }
    return pa.Table.from_batches([rows_to_batch([row])], CAPTURE_SCHEMA)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_ARRAY_CODES = {pa.int64(): "q", pa.int32(): "i"}


def _validity(values: Sequence[Any]) -> pa.Buffer | None:
    """An Arrow validity bitmap for ``values`` (None when nothing is null)."""
    if None not in values:
        return None
    valid = np.fromiter((v is not None for v in values), bool, len(values))
    return pa.py_buffer(np.packbits(valid, bitorder="little"))


def arrow_column(values: Sequence[Any], kind: pa.DataType) -> pa.Array:
    """One column of Python values (None for null) as an Arrow array of type ``kind``."""
    n = len(values)
    if pa.types.is_string(kind):
        builder = pa.lib.StringBuilder()
        builder.append_values(values)
        return builder.finish()
    if pa.types.is_boolean(kind):
        data = pa.py_buffer(np.packbits(np.fromiter(map(bool, values), bool, n),
                                        bitorder="little"))
        return pa.Array.from_buffers(kind, n, [_validity(values), data])
    if pa.types.is_timestamp(kind):
        micros = [0 if v is None else (v - _EPOCH) // _MICROSECOND for v in values]
        data = pa.py_buffer(array.array("q", micros))
        return pa.Array.from_buffers(kind, n, [_validity(values), data])
    code = _ARRAY_CODES[kind]
    data = pa.py_buffer(array.array(code, [0 if v is None else v for v in values]))
    return pa.Array.from_buffers(kind, n, [_validity(values), data])


def lists_to_batch(rows: Sequence[Sequence[Any]], schema: pa.Schema = CAPTURE_SCHEMA
                   ) -> pa.RecordBatch:
    """Rows as lists in ``schema``'s column order -> one record batch, column by column.

    The indexer's form: a row is a list (no dict per row), and a batch of rows is
    transposed into columns by one ``zip``.
    """
    columns = zip(*rows, strict=True) if rows else [()] * len(schema)
    arrays = [arrow_column(values, f.type) for values, f in zip(columns, schema, strict=True)]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def rows_to_batch(rows: Sequence[dict[str, Any]], schema: pa.Schema = CAPTURE_SCHEMA
                  ) -> pa.RecordBatch:
    """Row dicts -> one record batch of ``schema``, built column by column.

    Equivalent to ``pa.RecordBatch.from_pylist(rows, schema)`` for the capture columns'
    types (string, int32/int64, bool, timestamp), but without ``pa.array``: its first call
    imports pandas (about 0.2 s and 55 MB of RSS), which the indexer has no use for.
    """
    columns = zip(*map(itemgetter(*schema.names), rows), strict=True) if rows else [
        ()] * len(schema)
    arrays = [arrow_column(values, f.type) for values, f in zip(columns, schema, strict=True)]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
