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

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from citeaudit import storage

DATA_FILE = "data.parquet"


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
