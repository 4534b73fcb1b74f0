"""Parquet datasets under ``data/derived/<asset>/<key>=<value>/data.parquet``, written atomically.

A partition is one file, written to a temporary name in the same folder and moved into place
with ``os.replace``: a reader sees the old file or the new one, never half of one, and a crash
leaves at most a ``.tmp`` file that the next write of that partition removes. Temporary names
carry the writer's PID, so two writers can never write into one temporary file. Files carry no
timestamps or random ids, so the same rows give the same bytes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

DATA_FILE = "data.parquet"


def partition_dir(derived: Path, asset: str, partition: dict[str, str] | None = None) -> Path:
    """The folder of one hive partition of an asset (the asset folder when unpartitioned)."""
    folder = derived / asset
    for key, value in (partition or {}).items():
        folder = folder / f"{key}={value}"
    return folder


def write_partition(
    table: pa.Table, derived: Path, asset: str, partition: dict[str, str] | None = None
) -> Path:
    """Replace one partition of ``asset`` with ``table``, atomically; return the file written."""
    folder = partition_dir(derived, asset, partition)
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / DATA_FILE
    tmp = temp_name(final)
    remove_dead_temps(final)
    pq.write_table(
        table,
        tmp,
        compression="zstd",
        write_statistics=True,
        store_schema=True,
    )
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


def read_partition(derived: Path, asset: str, partition: dict[str, str] | None = None) -> pa.Table:
    """Read one partition written by :func:`write_partition`."""
    path = partition_dir(derived, asset, partition) / DATA_FILE
    if not path.is_file():
        raise FileNotFoundError(
            f"{asset}: partition {partition or '(none)'} not materialized: {path}"
        )
    return pq.read_table(path)


def read_optional(
    derived: Path, asset: str, partition: dict[str, str] | None = None
) -> pa.Table | None:
    """A partition that may legitimately be absent (an optional input): the table, or None."""
    path = partition_dir(derived, asset, partition) / DATA_FILE
    return pq.read_table(path) if path.is_file() else None


def dataset_glob(derived: Path, asset: str, depth: int) -> str:
    """A glob matching every partition file of an asset with ``depth`` partition levels."""
    return str(derived / asset / ("*/" * depth) / DATA_FILE).replace("//", "/")


def write_partition_batches(
    batches: Iterable[pa.RecordBatch | pa.Table], derived: Path, asset: str,
    partition: dict[str, str] | None = None,
) -> Path:
    """Replace one partition of ``asset`` with the rows of ``batches``, written row group by
    row group as they come (never held whole), atomically like :func:`write_partition`.

    Every batch must have the first one's schema; ``batches`` must yield at least one batch
    (possibly empty), so the file always has a schema."""
    folder = partition_dir(derived, asset, partition)
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / DATA_FILE
    tmp = temp_name(final)
    remove_dead_temps(final)
    writer = None
    try:
        for batch in batches:
            if writer is None:
                writer = pq.ParquetWriter(tmp, batch.schema, compression="zstd",
                                          write_statistics=True, store_schema=True)
            if isinstance(batch, pa.RecordBatch):
                writer.write_batch(batch)
            else:
                writer.write_table(batch)
        if writer is None:
            raise ValueError(f"{asset}: no batch to write (not even an empty one)")
        writer.close()
        writer = None
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, final)
    except BaseException:
        if writer is not None:
            writer.close()
        Path(tmp).unlink(missing_ok=True)
        raise
    return final
