"""Byte-range splitting: indexing one large gzip-per-record WARC as parallel ranges.

Why here: :func:`citeaudit.archive.index.index_paths` cuts a large ``.warc.gz`` at gzip member
boundaries so several workers can read it at once. Planning the cuts, indexing one range
(a worker's job) and accepting the ranges' rows only when they are provably those of a
whole-file read are kept together here, apart from the process pool that schedules them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from citeaudit.archive.index.readers import fastwarc_slots, gzip_record_cuts
from citeaudit.archive.index.records import Indexer, pair_order
from citeaudit.archive.index.slots import sniff_compression, starts_as_warc
from citeaudit.archive.index.url_keys import clean_target_uri

# Logged under the index's name, as before the split into modules (callers filter on it).
_log = logging.getLogger("citeaudit.archive.index")


def _may_cut(before: dict[str, str], after: dict[str, str]) -> bool:
    """False if two adjacent records (WARC headers read by the cut scan) may be a pair.

    Only a hint for choosing cuts (the records' real pairing is checked after indexing):
    a request next to a response/revisit with the same URI, or either one naming the other
    as concurrent, is not cut apart.
    """
    kinds = {before.get("type"), after.get("type")}
    if "request" not in kinds or not kinds & {"response", "revisit"}:
        return True
    same_uri = clean_target_uri(before.get("uri")) == clean_target_uri(after.get("uri"))
    linked = after.get("concurrent_to") == before.get("id") or (
        before.get("concurrent_to") == after.get("id")
    )
    return not (same_uri or linked)


def plan_split(path: str, parts: int, min_bytes: int | None) -> list[tuple[int, int]] | None:
    """Byte ranges ``[(start, end), ...]`` to index a large gzip WARC in parallel, or None.

    Only ``.warc.gz`` files larger than ``min_bytes`` whose first gzip member holds a WARC
    record are split, into at most ``parts`` ranges of at least ``min_bytes / 4`` each;
    the cuts come from :func:`~citeaudit.archive.readers.gzip_record_cuts` (a gzip member
    boundary between two records, not between a request and its response). None when the
    file should be indexed whole (also when no cut is found, or on any error).
    """
    if parts < 2 or min_bytes is None or not path.lower().endswith(".warc.gz"):
        return None
    try:
        size = os.path.getsize(path)
        if size <= min_bytes:
            return None
        parts = min(parts, max(2, size // max(min_bytes // 4, 1)))
        if sniff_compression(path) != "gzip" or not starts_as_warc(path, True):
            return None
        near = [size * k // parts for k in range(1, parts)]
        cuts = gzip_record_cuts(path, near, can_cut=_may_cut)
    except Exception as exc:  # never let planning break indexing: index the file whole
        _log.debug("not splitting %s: %s: %s", path, type(exc).__name__, exc)
        return None
    if not cuts:
        return None
    bounds = [0, *cuts, size]
    return list(zip(bounds, bounds[1:], strict=False))


_RangeResult = tuple[Any, str | None, tuple | None, tuple | None]


def index_range_job(args: tuple[str, str, int, int, bool]) -> _RangeResult:
    """Index the records in one byte range with FastWARC (a worker's share of a split file).

    Returns ``(table, None, first key, last key)``: the rows, the :func:`_join_key` of the
    range's first record and of its last record if that is still unpaired (None if it was
    consumed by a request/response pair), so the caller can check that no pair spans a
    cut. On a refusal or any error: ``(None, reason, None, None)``.
    """
    return index_range_into(args, None)


def index_range_into(
    args: tuple[str, str, int, int, bool], sink: Callable[[pa.RecordBatch], None] | None
) -> _RangeResult:
    """:func:`index_range_job`, sending the rows to ``sink`` when given (table ``True``)."""
    path, name, start, end, all_records = args
    indexer = Indexer(name, all_records, sink)
    try:
        indexer.run(fastwarc_slots(path, gz=True, start=start, end=end))
        if sink is None:
            table: pa.Table | bool = indexer.table()
        else:
            indexer.finish()
            table = True
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}"[:200], None, None
    last = indexer.prev[3] if indexer.prev is not None else None
    return table, None, indexer.first_key, last


def combine_ranges(
    results: list[_RangeResult], join: Callable[[list[Any]], Any] = pa.concat_tables
) -> tuple[Any, str | None]:
    """The rows of a split file from its ranges' results (in file order), or (None, why).

    Accepted only if every range was read by FastWARC without doubt and no request/response
    pair would have been joined across a cut (in a whole-file read, the last unpaired record
    of a range would be paired with the first record of the next one). ``join`` puts the
    ranges' first elements together (tables by default; the streamed index's part files).
    """
    for table, note, first, _last in results:
        if table is None or first is None:
            return None, note or "a range has no records"
    for (_t, _n, _f, last), (_t2, _n2, first, _l2) in zip(results, results[1:], strict=False):
        if last is not None and pair_order(last, first):
            return None, "a request/response pair spans a cut"
    return join([table for table, *_ in results]), None


def _index_ranges_serial(
    path: str, name: str, ranges: list[tuple[int, int]], all_records: bool = False
) -> tuple[pa.Table | None, str | None]:
    """Index a split file range by range in this process (what the workers do; for tests)."""
    results = [index_range_job((path, name, a, b, all_records)) for a, b in ranges]
    return combine_ranges(results)
