"""The streamed capture index: many WARC/ARC files into one sorted parquet file, flat memory.

Why here: a night of WARCs gives millions of rows, and holding them as one table before
sorting costs ~450 bytes each. Here every worker writes the rows of its file (or byte range
of a split file) to its own temporary part file in row groups as the indexer makes them; a
part is already in offset order, files are disjoint, so the sorted whole is the parts in file
name order, concatenated: an ordered merge that holds one row group per open input, never
the table. The result has exactly the rows and order of
:func:`citeaudit.archive.index.index_paths` (``file``, then ``offset``, file order on ties),
in row groups of :data:`ROW_GROUP_ROWS` rows, so a rerun writes the same bytes.
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import logging
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
import pyarrow as pa

from citeaudit import storage
from citeaudit.archive.index.files import SPLIT_MIN_BYTES, IndexMode, index_file_into, iter_jobs
from citeaudit.archive.index.progress import ProgressBar
from citeaudit.archive.index.ranges import combine_ranges, index_range_into
from citeaudit.archive.index.records import BATCH_ROWS
from citeaudit.archive.index.schema import CAPTURE_SCHEMA, arrow_column

ROW_GROUP_ROWS = 2048
"""Rows per row group of the merged index (DuckDB's vector size). Peak RSS grows with it:
measured on a 153 MB WARC, ~10 MB more at 4,096 rows, ~30 MB more at 16,384."""

_IPC_OPTIONS = pa.ipc.IpcWriteOptions(compression="lz4")

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Part:
    """The rows of one indexed file: its part files, in file order, and how many rows."""

    name: str
    paths: tuple[str, ...]
    rows: int


class _PartWriter:
    """A worker's sink: rows of one file (or range) into a temporary Arrow IPC part file.

    Parts are Arrow IPC streams (LZ4), not parquet: written and read back a batch at a time
    with no encoding work and no row groups to assemble, so a worker holds one batch.
    Keeps track of whether offsets never decrease (they do not, for any reader walk we
    know of); if they ever do, :meth:`close` sorts the part by offset (stable), the one
    case where a whole file's rows are held, so the merge can rely on the order.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._open()

    def _open(self) -> None:
        self._file = pa.OSFile(str(self.path), "wb")
        self._writer = pa.ipc.new_stream(self._file, CAPTURE_SCHEMA, options=_IPC_OPTIONS)
        self._last = -1
        self.rows = 0
        self.sorted = True

    def __call__(self, batch: pa.RecordBatch) -> None:
        if not batch.num_rows:
            return
        offsets = _int64_values(batch.column("offset"))
        if self.sorted and (offsets[0] < self._last or not np.all(offsets[1:] >= offsets[:-1])):
            self.sorted = False
        self._last = int(offsets[-1])
        self._writer.write_batch(batch)
        self.rows += batch.num_rows

    def _close_file(self) -> None:
        self._writer.close()
        self._file.close()

    def reset(self) -> None:
        self._close_file()
        self.path.unlink(missing_ok=True)
        self._open()

    def close(self) -> int:
        """Finish the file; return its row count."""
        self._close_file()
        if not self.sorted:
            _log.warning("%s: offsets out of order, sorting the part", self.path.name)
            table = pa.Table.from_batches(list(_read_part(str(self.path))), CAPTURE_SCHEMA)
            table = table.sort_by([("offset", "ascending")])
            with pa.OSFile(str(self.path), "wb") as out, pa.ipc.new_stream(
                out, CAPTURE_SCHEMA, options=_IPC_OPTIONS
            ) as writer:
                for batch in table.to_batches(max_chunksize=BATCH_ROWS):
                    writer.write_batch(batch)
        return self.rows


def _int64_values(column: pa.Array) -> np.ndarray:
    """An int64 column without nulls as a numpy view of its buffer.

    ``Array.to_numpy`` would do, but its first call imports pandas (~55 MB of RSS).
    """
    if column.null_count:
        raise ValueError("null offset in an index batch")
    return np.frombuffer(column.buffers()[1], np.int64, len(column), column.offset * 8)


def _read_part(path: str) -> Iterator[pa.RecordBatch]:
    with pa.OSFile(path, "rb") as source:
        yield from pa.ipc.open_stream(source)


def _part_path(directory: str, name: str, suffix: str) -> Path:
    digest = hashlib.sha1(name.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return Path(directory) / f"{digest}.{suffix}.arrows"


def _whole_part_job(directory: str, job: tuple[str, str, str, bool], suffix: str = "w") -> Part:
    """A worker's job: index one whole file into a part file."""
    path, name, reader, all_records = job
    out = _part_path(directory, name, suffix)
    writer = _PartWriter(out)
    with storage.local_copy(path) as local:  # a WARC on object storage: streamed down first
        index_file_into(local, name=name, reader=reader, all_records=all_records, sink=writer)
    return Part(name, (str(out),), writer.close())


def _range_part_job(
    directory: str, args: tuple[str, str, int, int, bool]
) -> tuple[Part | None, str | None, tuple | None, tuple | None]:
    """A worker's job: index one byte range of a split file into a part file."""
    _path, name, start, _end, _all = args
    out = _part_path(directory, name, f"r{start}")
    writer = _PartWriter(out)
    done, note, first, last = index_range_into(args, writer)
    rows = writer.close()
    if done is None:
        out.unlink(missing_ok=True)
        return None, note, None, None
    return Part(name, (str(out),), rows), None, first, last


def _join_parts(parts: list[Part]) -> Part:
    return Part(parts[0].name, tuple(p for part in parts for p in part.paths),
                sum(part.rows for part in parts))


def _combine_part_ranges(results: list) -> tuple[Part | None, str | None]:
    return combine_ranges(results, _join_parts)


def _local_part_job(directory: str, job: tuple[str, str, str, bool]) -> Part:
    path, name, _reader, all_records = job
    return _whole_part_job(directory, (path, name, "warcio", all_records), "local")


def _part_mode(directory: str) -> IndexMode:
    return IndexMode(partial(_whole_part_job, directory), partial(_range_part_job, directory),
                 _combine_part_ranges, partial(_local_part_job, directory), lambda part: part)


@dataclass
class IndexSummary:
    """What a streamed index held, counted while it was written."""

    files: int = 0
    rows: int = 0
    records_with_error: int = 0
    errors: dict[str, set[str]] = field(default_factory=dict)
    """Error code (the part before any ``:``) -> names of the files with it."""

    def count(self, batch: pa.RecordBatch) -> None:
        self.rows += batch.num_rows
        errors = batch.column("error")
        if errors.null_count == batch.num_rows:
            return
        import pyarrow.compute as pc  # only for batches with errors (it costs ~12 MB of RSS)

        has = pc.is_valid(errors)
        self.records_with_error += batch.num_rows - errors.null_count
        pairs = pa.table({"file": batch.column("file"), "error": errors}).filter(has)
        for pair in pairs.group_by(["file", "error"]).aggregate([]).to_pylist():
            for code in pair["error"].split(";"):
                self.errors.setdefault(code.split(":", 1)[0], set()).add(pair["file"])


def _with_origin(batch: pa.RecordBatch, origin: str | None, schema: pa.Schema
                 ) -> pa.RecordBatch:
    if origin is None:
        return batch
    column = arrow_column([origin] * batch.num_rows, pa.string())
    return pa.RecordBatch.from_arrays([*batch.columns, column], schema=schema)


def _part_segments(part: Part, origin: str | None, schema: pa.Schema
                   ) -> Iterator[tuple[str, pa.RecordBatch]]:
    for path in part.paths:
        for batch in _read_part(path):
            yield part.name, _with_origin(batch, origin, schema)


def _run_segments(batches: Iterable[pa.RecordBatch], schema: pa.Schema
                  ) -> Iterator[tuple[str, pa.RecordBatch]]:
    """A run sorted by (file, offset), cut into pieces of one file each."""
    for batch in batches:
        batch = batch.select(schema.names).cast(schema)
        n = batch.num_rows
        if not n:
            continue
        files = batch.column("file")
        cuts = [0]
        if n > 1:
            import pyarrow.compute as pc

            cuts += (pc.indices_nonzero(pc.not_equal(files[1:], files[:-1])).to_numpy() + 1
                     ).tolist()
        cuts.append(n)
        for start, end in zip(cuts, cuts[1:], strict=False):
            yield files[start].as_py(), batch.slice(start, end - start)


def _merge(sources: list[Iterator[tuple[str, pa.RecordBatch]]], first: list[str | None]
           ) -> Iterator[pa.RecordBatch]:
    """Merge sources of one-file pieces, each in file order, into (file, offset) order.

    ``first[i]`` is the name of source ``i``'s first file when known without reading (a
    part), else None (the source is read to find out). A source is only read while its file
    is being written, so one piece per source is held at most. A file in two sources is an
    error: its rows could not be put in offset order without holding them.
    """
    heap: list[tuple[str, int, pa.RecordBatch | None]] = []
    for seq, (source, name) in enumerate(zip(sources, first, strict=True)):
        if name is not None:
            heap.append((name, seq, None))
            continue
        piece = next(source, None)
        if piece is not None:
            heap.append((piece[0], seq, piece[1]))
    heapq.heapify(heap)
    while heap:
        name, seq, held = heapq.heappop(heap)
        if heap and heap[0][0] == name:
            raise ValueError(f"file {name!r} is in two inputs of one index")
        if held is not None:
            yield held
        for piece_name, batch in sources[seq]:
            if piece_name == name:
                yield batch
                continue
            if piece_name < name:
                raise ValueError(f"input not sorted by file: {piece_name!r} after {name!r}")
            heapq.heappush(heap, (piece_name, seq, batch))
            break


@contextlib.contextmanager
def _lean_memory_pool() -> Iterator[None]:
    """Arrow allocations from jemalloc (else the system's malloc) while indexing.

    Arrow's default mimalloc pool keeps freed pages: streaming a WARC through it peaks ~40 MB
    higher, and grows with the rows written, than the same work on jemalloc. Buffers keep
    the pool they came from, so switching back afterwards is safe.
    """
    previous = pa.default_memory_pool()
    try:
        lean = pa.jemalloc_memory_pool()
    except NotImplementedError:  # a pyarrow built without jemalloc
        lean = pa.system_memory_pool()
    pa.set_memory_pool(lean)
    try:
        yield
    finally:
        pa.set_memory_pool(previous)


@contextlib.contextmanager
def streamed_index(
    paths: list[tuple[Path, str]],
    *,
    workers: int = 0,
    reader: str = "auto",
    all_records: bool = False,
    split_min_bytes: int | None = SPLIT_MIN_BYTES,
    progress: bool = False,
    origin: str | None = None,
    sorted_runs: Iterable[Iterable[pa.RecordBatch]] = (),
    scratch: str | Path | None = None,
) -> Iterator[tuple[Iterator[pa.RecordBatch], IndexSummary]]:
    """Index ``paths`` into temporary parts; give the merged rows as record batches.

    A context manager: ``with streamed_index(paths) as (batches, summary):`` indexes every
    file first (parallel processes, splitting and fallbacks exactly as
    :func:`~citeaudit.archive.index.iter_index_paths`), each worker writing its rows to a
    part file under a fresh temporary folder in ``scratch`` (default: the system's), then
    yields an iterator of the merged batches, sorted by (file, offset), and a summary that
    is complete once the batches are consumed. The parts are removed on leaving.

    ``origin`` adds the ``origin`` column (the ``captures`` table); ``sorted_runs`` are
    further inputs already sorted by (file, offset), in the output's columns, whose file
    names are not among ``paths`` (the day's fetched captures). The output schema is
    :data:`CAPTURE_SCHEMA`, plus ``origin`` when it is given.
    """
    names = [name for _path, name in paths]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"two inputs have the same name: {', '.join(twice[:3])}")
    schema = CAPTURE_SCHEMA
    if origin is not None:
        schema = schema.append(pa.field("origin", pa.string()))
    directory = tempfile.mkdtemp(prefix="citeaudit-index-", dir=scratch)
    try:
        with _lean_memory_pool():
            parts: list[Part] = []
            with ProgressBar(len(paths), progress) as advance:
                for name, part in iter_jobs(
                    paths, _part_mode(directory), workers=workers, reader=reader,
                    all_records=all_records, split_min_bytes=split_min_bytes,
                ):
                    parts.append(part)
                    advance(name)
            parts.sort(key=lambda part: part.name)
            summary = IndexSummary(files=len(paths))
            sources = [_part_segments(part, origin, schema) for part in parts]
            sources += [_run_segments(run, schema) for run in sorted_runs]
            first = [part.name for part in parts] + [None] * (len(sources) - len(parts))

            def batches() -> Iterator[pa.RecordBatch]:
                for batch in _merge(sources, first):
                    summary.count(batch)
                    yield batch

            yield batches(), summary
    finally:
        shutil.rmtree(directory, ignore_errors=True)
