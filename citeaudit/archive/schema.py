"""The capture table's schema and the small helpers that build its rows.

Why here: :data:`CAPTURE_SCHEMA` is the contract between the indexer, the CDXJ writer, the
parallel driver and everything downstream; keeping it (with the reader names and the
single-row/error helpers) in one dependency-free module lets each of them import it alone.
"""

from __future__ import annotations

from collections.abc import Iterable

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


_COLUMNS = CAPTURE_SCHEMA.names

READERS = ("auto", "warcio", "fastwarc")


def _join_errors(codes: Iterable[str]) -> str | None:
    seen: list[str] = []
    for code in codes:
        if code not in seen:
            seen.append(code)
    return ";".join(seen) if seen else None


def _single_row_table(name: str, offset: int, error: str, length: int | None = None) -> pa.Table:
    row = dict.fromkeys(_COLUMNS, None) | {
        "file": name, "offset": offset, "length": length, "error": error,
    }
    return pa.Table.from_pylist([row], CAPTURE_SCHEMA)
