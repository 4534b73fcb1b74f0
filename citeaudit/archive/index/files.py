"""The capture index: WARC/ARC files -> one Arrow row per capture, and pywb-style CDXJ.

Why: every citation check downstream needs to know what an archive holds for a URL (status,
redirect target, content type, payload hash, when) and where the record is (file, offset,
length) so it can be replayed. This module builds that index with the same offsets, lengths,
SURT keys and digests as pywb / cdxj-indexer, so a row can be handed to a pywb-compatible
replayer, and adds what an audit needs on top: a SHA-256 of every payload, whether the
declared payload digest is right, truncation, and an ``error`` for anything wrong with the
bytes (a bad file never stops a batch).

Pure functions, no Dagster. Reading is streamed (flat memory, payloads hashed in 64 KiB
pieces) by one of two readers in :mod:`citeaudit.archive.index.readers`: FastWARC where it can prove
its offsets right, warcio otherwise (ARC files, damaged files). Both give identical rows.
:func:`index_paths` runs files in parallel processes and also cuts a large gzip-per-record
``.warc.gz`` into byte ranges at gzip member boundaries, one per worker, read by FastWARC;
the ranges' rows are accepted only if they are provably those of a whole-file read (every
cut confirmed as a record boundary by the sequential read, no request/response pair across
a cut), else the file is indexed whole.

What gets a row: ``response``, ``revisit`` and ``resource`` records (not
``application/warc-fields`` resources) and ARC records, as pywb and cdxj-indexer index them;
not ``warcinfo`` or ``request`` records, nor (unlike pywb and cdxj-indexer) ``metadata``
records; ``all_records=True`` indexes every record. Plus a row for each unreadable stretch of
bytes. A POST/PUT request is not indexed itself but, as in pywb, its body goes into the
urlkey of the response it belongs to (``org,httpbin)/post?__wb_method=post&foo=bar``).

Error codes (``;``-joined when several apply; a wrong digest is not one, that is
``digest_verified=False``):

* ``truncated_record``: the file (or the record's gzip member) ends before Content-Length
  bytes; ``truncated`` is True. (A ``WARC-Truncated`` header alone sets ``truncated``.)
* ``content_length_mismatch``: a stray line follows Content-Length bytes (length wrong).
* ``invalid_content_length``: missing, negative or non-numeric Content-Length.
* ``whole_file_gzip``: the record shares a gzip member with other records; ``offset`` and
  ``length`` are the member's.
* ``misaligned_gzip_member``: the record straddles gzip members or starts inside one.
* ``corrupt_gzip_member``: deflate data is corrupt; reading resumes at the next member.
* ``invalid_warc_date``: WARC-Date missing or not a date (no ``timestamp``).
* ``missing_http_status`` / ``arc_missing_status``: an http(s) response without a status.
* ``unreadable_record: <detail>``: bytes that do not parse as a record (one row per
  stretch, up to the next record found) or HTTP headers over 1 MiB.
* ``unreadable_file: <detail>``, ``unsupported_compression: <lz4|zstd|bzip2|xz>``,
  ``fastwarc_refused: <reason>`` (only with ``reader="fastwarc"``): one row for the file.

The rest of the stage, by module of :mod:`citeaudit.archive`: ``schema``
(:data:`CAPTURE_SCHEMA`), ``records`` (records -> rows), ``url_keys``, ``dates``, ``digests``,
``http_head``, ``post_query``, ``cdxj``, ``ranges`` (split files), ``readers``, ``progress``,
``stream`` (the streamed index: parts per worker merged into one sorted parquet file, flat
memory) and ``cli`` (the ``index-warc`` command). This module keeps the entry points:
:func:`index_file` (and :func:`index_file_into`, which streams a file's rows to a sink) and
the parallel driver (:func:`iter_index_paths`, :func:`index_paths`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import pyarrow as pa

from citeaudit import storage
from citeaudit.archive.index.progress import ProgressBar
from citeaudit.archive.index.ranges import (
    combine_ranges,
    index_range_job,
    plan_split,
)
from citeaudit.archive.index.readers import (
    FastwarcRefused,
    fastwarc_slots,
    sniff_compression,
    warcio_slots,
)
from citeaudit.archive.index.records import Indexer
from citeaudit.archive.index.schema import CAPTURE_SCHEMA, READERS, single_row_table
from citeaudit.archive.index.slots import starts_as_warc

SPLIT_MIN_BYTES = 32 << 20
""":func:`index_paths` splits ``.warc.gz`` files larger than this between its workers."""

_log = logging.getLogger("citeaudit.archive.index")


def _with_reader_metadata(table: pa.Table, used: str, note: str | None) -> pa.Table:
    meta = {b"citeaudit.reader": used.encode()}
    if note:
        meta[b"citeaudit.fallback_reason"] = note.encode("utf-8", "replace")
    return table.replace_schema_metadata(meta)


def index_file(
    path: str | Path,
    *,
    name: str | None = None,
    reader: str = "auto",
    all_records: bool = False,
) -> pa.Table:
    """Index one WARC/ARC file (plain or gzip) into rows of :data:`CAPTURE_SCHEMA`.

    ``name`` goes in the ``file`` column (default: ``str(path)``). ``reader``: ``"auto"``
    (FastWARC for WARC files whose framing it gets right, else warcio), ``"warcio"`` or
    ``"fastwarc"`` (a file FastWARC refuses becomes a single ``fastwarc_refused: ...`` row).
    ``all_records`` also indexes warcinfo, request, metadata and other records.

    Never raises on bad input: an unreadable file, unsupported compression or unparseable
    bytes become rows with ``error`` set; good records around them are indexed. Rows come in
    file order. The table's schema metadata says which reader produced it
    (``citeaudit.reader``) and why FastWARC was not used (``citeaudit.fallback_reason``).
    """
    table, used, note = index_file_into(path, name=name, reader=reader, all_records=all_records)
    assert table is not None
    return _with_reader_metadata(table, used, note) if used else table


class RowSink(Protocol):
    """Where :func:`index_file_into` sends rows: record batches as made, and a restart."""

    def __call__(self, batch: pa.RecordBatch) -> None: ...

    def reset(self) -> None:
        """Forget every batch sent so far (the file is being indexed again from the start)."""


def index_file_into(
    path: str | Path,
    *,
    name: str | None = None,
    reader: str = "auto",
    all_records: bool = False,
    sink: RowSink | None = None,
) -> tuple[pa.Table | None, str | None, str | None]:
    """:func:`index_file`, optionally streaming rows to ``sink`` instead of returning them.

    Returns ``(table, reader used, fallback note)``; ``table`` is None when ``sink`` was
    given (every row went there, in record batches, in file order). When FastWARC gives up
    part way, ``sink.reset()`` is called before the file is indexed again with warcio, so
    the sink ends up with exactly the rows :func:`index_file` would return. The reader is
    None for a file no reader opened (unreadable, empty, unsupported compression).
    """
    if reader not in READERS:
        raise ValueError(f"reader must be one of {READERS}, not {reader!r}")
    path = str(path)
    name = path if name is None else name
    try:
        table, used, note = _index_file(path, name, reader, all_records, sink)
    except Exception as exc:  # never raise on input (the walks catch their own errors)
        detail = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
        table, used, note = single_row_table(name, 0, "unreadable_file: " + detail), None, None
        if sink is not None:
            sink.reset()
    if sink is not None and table is not None:
        for batch in table.to_batches():
            sink(batch)
        table = None
    return table, used, note


def _index_file(
    path: str, name: str, reader: str, all_records: bool, sink: RowSink | None
) -> tuple[pa.Table | None, str | None, str | None]:
    if path.lower().endswith(".wacz"):  # a zip of WARCs: citeaudit/archive/index/wacz.py
        from citeaudit.archive.index.wacz import index_wacz

        return index_wacz(path, name, index_file, reader, all_records), None, None
    try:
        compression = sniff_compression(path)
    except OSError as exc:
        return single_row_table(name, 0, f"unreadable_file: {exc.strerror or exc}"), None, None
    if compression == "empty":
        return CAPTURE_SCHEMA.empty_table(), None, None
    if compression not in ("gzip", "none"):
        size = os.path.getsize(path)
        table = single_row_table(name, 0, f"unsupported_compression: {compression}", size)
        return table, None, None
    gz = compression == "gzip"

    def result(indexer: Indexer) -> pa.Table | None:
        if sink is None:
            return indexer.table()
        indexer.finish()
        return None

    note = None
    if reader in ("auto", "fastwarc"):
        if starts_as_warc(path, gz):
            indexer = Indexer(name, all_records, sink)
            try:
                indexer.run(fastwarc_slots(path, gz=gz))
                return result(indexer), "fastwarc", None
            except FastwarcRefused as exc:
                note = str(exc)
            except Exception as exc:  # a FastWARC or internal surprise: warcio decides
                note = f"{type(exc).__name__}: {exc}"
            if sink is not None:
                sink.reset()
        else:
            note = "not a WARC file (ARC or unknown format)"
        if reader == "fastwarc":
            return single_row_table(name, 0, "fastwarc_refused: " + note), "fastwarc", note

    indexer = Indexer(name, all_records, sink)
    try:
        with open(path, "rb") as fh:
            indexer.run(warcio_slots(fh, gz=gz))
    except Exception as exc:  # never raise: keep what was indexed, report the rest
        last = indexer.pending[-1].offset if indexer.pending else 0
        detail = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
        indexer.add_failure_row(last, "unreadable_file: " + detail)
    return result(indexer), "warcio", note


def _index_job(args: tuple[str, str, str, bool]) -> pa.Table:
    path, name, reader, all_records = args
    with storage.local_copy(path) as local:  # a WARC on object storage: streamed down first
        return index_file(local, name=name, reader=reader, all_records=all_records)


class IndexMode(NamedTuple):
    """What the scheduler runs and yields: tables (:func:`iter_index_paths`) or parts.

    ``whole(job)`` indexes a whole file in a worker, ``ranged(args)`` one byte range of a
    split file (a :data:`_RangeResult`), ``join(results)`` puts a split file's range results
    back together (``(value, None)`` or ``(None, why)``), ``local(job)`` indexes a file in
    this process with warcio after a worker died, ``finish(value)`` prepares what is yielded.
    """

    whole: Callable[[tuple[str, str, str, bool]], Any]
    ranged: Callable[[tuple[str, str, int, int, bool]], Any]
    join: Callable[[list[Any]], tuple[Any, str | None]]
    local: Callable[[tuple[str, str, str, bool]], Any]
    finish: Callable[[Any], Any]


def _local_table(job: tuple[str, str, str, bool]) -> pa.Table:
    path, name, _reader, all_records = job
    try:
        return index_file(path, name=name, reader="warcio", all_records=all_records)
    except Exception as exc:  # pragma: no cover - index_file does not raise on input
        return single_row_table(name, 0, f"unreadable_file: {exc}")


def _table_mode() -> IndexMode:
    # looked up at call time, so that a test can stand in for the range job
    return IndexMode(_index_job, index_range_job, combine_ranges, _local_table,
                 lambda table: table.replace_schema_metadata(None))


def iter_index_paths(
    paths: list[tuple[Path, str]],
    *,
    workers: int = 0,
    reader: str = "auto",
    all_records: bool = False,
    split_min_bytes: int | None = SPLIT_MIN_BYTES,
) -> Iterator[tuple[str, pa.Table]]:
    """Index several files in parallel processes; yield ``(name, table)`` as each finishes.

    The streaming form of :func:`index_paths`: each file's table is yielded as soon as it is
    ready (:func:`citeaudit.archive.stream.streamed_index` goes further and never holds a
    whole file's rows). ``workers=0`` means ``os.cpu_count()``; with one worker (or one file
    that is not split) everything runs in this process. Largest files are started first.

    A gzip-per-record ``.warc.gz`` file larger than ``split_min_bytes`` (None: never) is cut
    into up to ``workers`` byte ranges at gzip member boundaries, indexed in parallel with
    FastWARC and put back together: the rows are identical to indexing it whole. On any
    doubt (no cut point found, a range FastWARC refuses, a request/response pair across a
    cut, an error) the file is indexed whole, as without splitting.

    If a worker process dies (a crash inside a C extension), its files are indexed again
    here with warcio; should that fail too, the file gets a single ``unreadable_file`` row.
    Tables come without reader metadata.
    """
    yield from iter_jobs(paths, _table_mode(), workers=workers, reader=reader,
                          all_records=all_records, split_min_bytes=split_min_bytes)


def iter_jobs(
    paths: list[tuple[Path, str]],
    mode: IndexMode,
    *,
    workers: int,
    reader: str,
    all_records: bool,
    split_min_bytes: int | None,
) -> Iterator[tuple[str, Any]]:
    """Plan and run the index jobs of ``paths`` (see :func:`iter_index_paths`) in ``mode``."""
    if reader not in READERS:
        raise ValueError(f"reader must be one of {READERS}, not {reader!r}")
    jobs = [(str(p), n, reader, all_records) for p, n in paths]

    def size_of(job: tuple[str, str, str, bool]) -> int:
        try:
            return os.path.getsize(job[0])
        except OSError:
            return 0

    jobs.sort(key=size_of, reverse=True)
    workers = workers or os.cpu_count() or 1
    plans: dict[int, list[tuple[int, int]]] = {}
    if workers > 1 and reader != "warcio":
        for index, job in enumerate(jobs):
            ranges = plan_split(job[0], workers, split_min_bytes)
            if ranges is not None:
                plans[index] = ranges
    # tasks: (bytes, job index, range index or None for the whole file)
    tasks: list[tuple[int, int, int | None]] = []
    for index, job in enumerate(jobs):
        if index in plans:
            tasks.extend((b - a, index, r) for r, (a, b) in enumerate(plans[index]))
        else:
            tasks.append((size_of(job), index, None))
    tasks.sort(key=lambda task: task[0], reverse=True)  # stable: file order breaks ties
    workers = min(workers, len(tasks))
    if workers <= 1:
        for job in jobs:
            yield job[1], mode.finish(mode.whole(job))
        return
    yield from _run_pool(jobs, plans, tasks, workers, mode)


def _run_pool(
    jobs: list[tuple[str, str, str, bool]],
    plans: dict[int, list[tuple[int, int]]],
    tasks: list[tuple[int, int, int | None]],
    workers: int,
    mode: IndexMode | None = None,
) -> Iterator[tuple[str, Any]]:
    """Run whole-file and range tasks in a process pool; see :func:`iter_index_paths`."""
    from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

    mode = mode or _table_mode()
    pending: dict[Future, tuple[int, int | None]] = {}
    parts: dict[int, list[Any]] = {i: [None] * len(r) for i, r in plans.items()}
    failed: list[int] = []  # job indexes to index again here with warcio

    with ProcessPoolExecutor(max_workers=workers) as pool:

        def submit(index: int, part: int | None) -> None:
            path, name, reader, all_records = jobs[index]
            try:
                if part is None:
                    future = pool.submit(mode.whole, jobs[index])
                else:
                    start, end = plans[index][part]
                    future = pool.submit(mode.ranged, (path, name, start, end, all_records))
            except Exception:  # the pool is broken (a worker died)
                failed.append(index)
                return
            pending[future] = (index, part)

        def abandon(index: int, why: str, whole: bool) -> None:
            """Give up splitting a file: drop its ranges, index it whole (or here)."""
            _log.info("indexing %s whole, not split: %s", jobs[index][0], why)
            parts.pop(index, None)
            for future, (other, _part) in list(pending.items()):
                if other == index and future.cancel():
                    del pending[future]
            if whole:
                submit(index, None)
            else:
                failed.append(index)

        for _size, index, part in tasks:
            submit(index, part)
        while pending:
            done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: (pending[f][0], pending[f][1] or 0)):
                index, part = pending.pop(future)
                if future.cancelled():
                    continue
                try:
                    result = future.result()
                except Exception:  # the worker died (BrokenProcessPool) or could not pickle
                    if part is None:
                        failed.append(index)
                    elif index in parts:
                        abandon(index, "a worker failed", whole=False)
                    continue
                if part is None:
                    yield jobs[index][1], mode.finish(result)
                    continue
                if index not in parts:  # splitting this file was abandoned already
                    continue
                if result[0] is None:
                    abandon(index, f"range {plans[index][part]}: {result[1]}", whole=True)
                    continue
                parts[index][part] = result
                if any(r is None for r in parts[index]):
                    continue
                value, why = mode.join(parts[index])
                if value is None:
                    abandon(index, why or "cannot combine ranges", whole=True)
                    continue
                del parts[index]
                yield jobs[index][1], value
    for index in failed:
        yield jobs[index][1], mode.finish(mode.local(jobs[index]))


def index_paths(
    paths: list[tuple[Path, str]],
    *,
    workers: int = 0,
    reader: str = "auto",
    progress: bool = False,
    all_records: bool = False,
    split_min_bytes: int | None = SPLIT_MIN_BYTES,
) -> pa.Table:
    """Index several files, in parallel processes, into one table sorted by (file, offset).

    ``paths`` are ``(path, name)`` pairs; ``workers=0`` means ``os.cpu_count()``; one worker
    (or one file that is not split) runs in this process. ``.warc.gz`` files larger than
    ``split_min_bytes`` (None: never) are split into byte ranges indexed in parallel, with
    rows identical to indexing them whole. See :func:`iter_index_paths` for the scheduling,
    the splitting and what happens when a worker dies. ``progress`` shows a rich progress
    bar on stderr. The whole table is held (~450 bytes a row): for a night of WARCs use
    :func:`citeaudit.archive.stream.streamed_index`, which writes the same rows in flat memory.
    """
    tables: list[pa.Table] = []
    with ProgressBar(len(paths), progress) as advance:
        for name, table in iter_index_paths(
            paths, workers=workers, reader=reader, all_records=all_records,
            split_min_bytes=split_min_bytes,
        ):
            tables.append(table)
            advance(name)
    if not tables:
        return CAPTURE_SCHEMA.empty_table()
    table = pa.concat_tables(tables)
    return table.sort_by([("file", "ascending"), ("offset", "ascending")])
