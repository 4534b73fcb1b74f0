"""Parquet datasets under ``data/derived/<asset>/<key>=<value>/data.parquet``, written atomically.

A partition is one file, written to a temporary name in the same folder and moved into place
with ``os.replace``: a reader sees the old file or the new one, never half of one, and a crash
leaves at most a ``.tmp`` file that the next write of that partition removes. Temporary names
carry the writer's PID, so two writers can never write into one temporary file. Files carry no
timestamps or random ids, so the same rows give the same bytes.

On an object-storage root (``s3://bucket/prefix``, see :mod:`citeaudit.storage`) the file is
serialized in memory and uploaded through ``pyarrow.fs`` as one object: S3 shows an object only
once it is complete, so a reader again sees the old file or the new one. The bytes are the
same as a local write of the same table.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from citeaudit import storage

DATA_FILE = "data.parquet"
# Rows per row group of a streamed write: bounds what a writer holds, and what a reader of
# one row group needs.
DEFAULT_ROW_GROUP_ROWS = 16_384


def partition_dir(
    derived: storage.Root, asset: str, partition: dict[str, str] | None = None
) -> storage.Root:
    """The folder of one hive partition of an asset (the asset folder when unpartitioned)."""
    folder = derived / asset
    for key, value in (partition or {}).items():
        folder = folder / f"{key}={value}"
    return folder


WRITE_OPTIONS = {"compression": "zstd", "write_statistics": True, "store_schema": True}


def write_partition(
    table: pa.Table, derived: storage.Root, asset: str, partition: dict[str, str] | None = None
) -> storage.Root:
    """Replace one partition of ``asset`` with ``table``, atomically; return the file written."""
    folder = partition_dir(derived, asset, partition)
    if storage.is_remote(folder):
        final = folder / DATA_FILE
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, **WRITE_OPTIONS)
        storage.write_bytes_atomic(final, sink.getvalue().to_pybytes())
        return final
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / DATA_FILE
    tmp = temp_name(final)
    remove_dead_temps(final)
    pq.write_table(table, tmp, **WRITE_OPTIONS)
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, final)
    return final


class RowGroupWriter:
    """A parquet file written from record batches in row groups of exactly ``rows`` rows.

    Batches of any size go in; at most about ``rows`` rows are held. Row groups (all but the
    last of ``rows`` rows) and their pages depend only on the rows written, not on how they
    were batched, so the same rows give the same bytes. Same options as
    :func:`write_partition` (zstd unless told otherwise, statistics, the Arrow schema).
    """

    def __init__(self, where: str | Path, schema: pa.Schema, rows: int,
                 compression: str = "zstd", use_dictionary: bool | list[str] = True) -> None:
        self.schema = schema
        self.group_rows = rows
        self.rows = 0
        self._held: list[pa.RecordBatch] = []
        self._held_rows = 0
        self._writer = pq.ParquetWriter(str(where), schema, compression=compression,
                                        use_dictionary=use_dictionary,
                                        write_statistics=True, store_schema=True)

    def write(self, batch: pa.RecordBatch) -> None:
        """Add rows; full row groups are written out at once."""
        if not batch.num_rows:
            return
        self._held.append(batch)
        self._held_rows += batch.num_rows
        self.rows += batch.num_rows
        while self._held_rows >= self.group_rows:
            self._write_group(self.group_rows)

    def _write_group(self, size: int) -> None:
        held = pa.Table.from_batches(self._held, self.schema)
        group = held.slice(0, size).combine_chunks()  # contiguous: pages as for one write
        self._writer.write_table(group, row_group_size=max(size, 1))
        rest = held.slice(size)  # views of the held batches, not copies
        self._held = rest.to_batches() if rest.num_rows else []
        self._held_rows = rest.num_rows

    def close(self) -> None:
        """Write the last (short) row group and the footer."""
        if self._held_rows:
            self._write_group(self._held_rows)
        self._writer.close()


def write_batches(
    batches: Iterable[pa.RecordBatch | pa.Table], schema: pa.Schema | None, final: Path, *,
    row_group_rows: int = DEFAULT_ROW_GROUP_ROWS,
) -> Path:
    """Write ``final`` from a stream of record batches, atomically, holding one row group.

    Like :func:`write_partition` (temporary name, fsync, rename; same bytes for the same
    rows), for tables too large to hold: rows go out in row groups of ``row_group_rows``.
    ``schema`` None takes the first batch's; then ``batches`` must yield at least one batch
    (possibly empty), so the file always has a schema.
    """
    final = Path(final)
    stream = iter(batches)
    if schema is None:
        first = next(stream, None)
        if first is None:
            raise ValueError(f"{final}: no batch to write (not even an empty one)")
        schema = first.schema
        stream = itertools.chain([first], stream)
    tmp = temp_name(final)
    remove_dead_temps(final)
    writer = RowGroupWriter(tmp, schema, row_group_rows)
    try:
        for batch in stream:
            for part in batch.to_batches() if isinstance(batch, pa.Table) else [batch]:
                writer.write(part)
        writer.close()
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, final)
    finally:
        tmp.unlink(missing_ok=True)
    return final


def write_partition_batches(
    batches: Iterable[pa.RecordBatch | pa.Table], schema: pa.Schema | None, derived: Path,
    asset: str, partition: dict[str, str] | None = None, *,
    row_group_rows: int = DEFAULT_ROW_GROUP_ROWS,
) -> Path:
    """Replace one partition of ``asset`` with the rows of ``batches``, row group by row group
    as they come (never held whole), atomically like :func:`write_partition`; see
    :func:`write_batches`."""
    folder = partition_dir(derived, asset, partition)
    if storage.is_remote(folder):  # written locally, then uploaded as one object
        with tempfile.TemporaryDirectory(prefix="citeaudit-") as work:
            local = write_batches(batches, schema, Path(work) / DATA_FILE,
                                  row_group_rows=row_group_rows)
            storage.upload_file(local, folder / DATA_FILE)
        return folder / DATA_FILE
    folder.mkdir(parents=True, exist_ok=True)
    return write_batches(batches, schema, folder / DATA_FILE, row_group_rows=row_group_rows)


def temp_name(final: Path) -> Path:
    """The temporary name this process writes ``final`` under (``.<name>.<pid>.tmp``)."""
    return final.with_name(f".{final.name}.{os.getpid()}.tmp")


def pid_alive(pid: object) -> bool:
    """Whether a process with this PID runs (a writer's temp file or lock is still in use)."""
    if not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_dead_temps(final: Path) -> None:
    """Remove temporary files of ``final`` left by writers that died (their PID is gone)."""
    for leftover in final.parent.glob(f".{final.name}.*.tmp*"):
        pid = leftover.name[len(final.name) + 2:].split(".", 1)[0]
        if not pid.isdigit() or (int(pid) != os.getpid() and not pid_alive(int(pid))):
            leftover.unlink(missing_ok=True)


def read_table(path: storage.Root, **kwargs) -> pa.Table:
    """Read one parquet file, local or remote, through ``pyarrow.fs``.

    A remote file is fetched whole by one GET without a range (:func:`storage.read_bytes`) and
    parsed from memory: ranged reads (a size, then the footer, then column chunks; pyarrow's
    own S3 input streams read so) can straddle two versions of an object being replaced, and
    a test shows they do; one plain GET always returns one whole version.
    """
    if not storage.is_remote(path):
        return pq.read_table(path, **kwargs)
    return pq.read_table(pa.BufferReader(storage.read_bytes(path)), **kwargs)


def read_partition(
    derived: storage.Root, asset: str, partition: dict[str, str] | None = None
) -> pa.Table:
    """Read one partition written by :func:`write_partition`."""
    path = partition_dir(derived, asset, partition) / DATA_FILE
    if not storage.is_file(path):
        raise FileNotFoundError(
            f"{asset}: partition {partition or '(none)'} not materialized: {storage.uri(path)}"
        )
    return read_table(path)


def read_optional(
    derived: storage.Root, asset: str, partition: dict[str, str] | None = None
) -> pa.Table | None:
    """A partition that may legitimately be absent (an optional input): the table, or None."""
    path = partition_dir(derived, asset, partition) / DATA_FILE
    return read_table(path) if storage.is_file(path) else None


def dataset_glob(derived: storage.Root, asset: str, depth: int) -> str:
    """A glob matching every partition file of an asset with ``depth`` partition levels
    (``s3://bucket/prefix/...`` for a remote root: DuckDB reads it through s3fs)."""
    tail = "/".join([asset, *(["*"] * depth), DATA_FILE])
    return f"{storage.uri(derived).rstrip('/')}/{tail}"


