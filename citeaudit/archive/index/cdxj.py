"""CDXJ output: capture rows -> pywb-compatible CDXJ lines.

Why here: the Arrow table is the audit's own index; CDXJ is what a pywb replayer reads.
Which rows pywb could replay (:data:`CDXJ_SKIPPED_ERRORS`) and the exact line format
(cdxj-indexer's field order and JSON spacing) are decided here and nowhere else.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pyarrow as pa

CDXJ_SKIPPED_ERRORS = (
    "whole_file_gzip",
    "misaligned_gzip_member",
    "corrupt_gzip_member",
    "invalid_warc_date",
    "unreadable_record",
    "unreadable_file",
    "unsupported_compression",
    "fastwarc_refused",
)
"""Rows with one of these error codes are left out of CDXJ: pywb could not replay them from
their (offset, length), or they have no timestamp. Truncated records, a wrong
Content-Length or a missing status are still indexed, as pywb/cdxj-indexer do."""


def _cdxj_eligible(error: str | None) -> bool:
    if not error:
        return True
    return not any(code.startswith(CDXJ_SKIPPED_ERRORS) for code in error.split(";"))


def to_cdxj_lines(table: pa.Table) -> Iterator[str]:
    """pywb-compatible CDXJ lines (no trailing newline), sorted as pywb sorts (by line).

    ``urlkey timestamp {"url", "mime", "status", "digest", "length", "offset", "filename"}``
    with the field order, string values and JSON spacing of cdxj-indexer; ``mime``,
    ``status`` and ``digest`` are left out when unknown. Rows that pywb could not replay
    (see :data:`CDXJ_SKIPPED_ERRORS`) or that lack a urlkey or timestamp are skipped.
    """
    cols = table.select(
        ["urlkey", "timestamp", "target_uri", "mime", "http_status", "cdx_digest", "length",
         "offset", "file", "error"]
    ).to_pydict()
    lines = []
    for urlkey, ts, url, mime, status, digest, length, offset, file, error in zip(
        *cols.values(), strict=True
    ):
        if urlkey is None or ts is None or offset is None or length is None:
            continue
        if not _cdxj_eligible(error):
            continue
        entry: dict[str, str] = {"url": url}
        if mime is not None:
            entry["mime"] = mime
        if status is not None:
            entry["status"] = str(status)
        if digest is not None:
            entry["digest"] = digest
        entry["length"] = str(length)
        entry["offset"] = str(offset)
        entry["filename"] = file
        lines.append(f"{urlkey} {ts} {json.dumps(entry)}")
    lines.sort()
    return iter(lines)
