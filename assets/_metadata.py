"""Writing an asset's partition and describing it, shared by every asset.

:func:`write_table` and :func:`write_batches` write one partition through
:mod:`citeaudit.parquet_io` (atomically) and return its materialization metadata: row count,
file path, the file's SHA-256 (so ``citeaudit status`` can tell a rerun that wrote the same
bytes from a change), a small preview, and the asset's own figures. :func:`file_metadata`
describes a partition file a stage wrote itself (streamed); :func:`count_by` and
:func:`counts_text` give the per-value row counts several assets report.

Work not done twice per codebook: a judged step whose inputs (the partition files it reads,
by content) and the codebook settings it reads are those another codebook's partition of the
same date was computed from, under the same code, copies that partition's file instead of
computing it again (:func:`reuse_key`, :func:`reuse_other_codebook`, :func:`remember_key`). The
key is written beside the data file (``reuse_key.txt``, a SHA-256) only after the data, and
removed before a recompute begins, so a key always names the data it sits beside; a backfill
that changes a setting the step reads computes anew.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path

import dagster as dg
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

import citeaudit
from citeaudit import parquet_io, project_file, storage

PREVIEW_ROWS = 5
PREVIEW_CELL = 60

Metadata = dict[str, dg.MetadataValue]


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= PREVIEW_CELL else text[: PREVIEW_CELL - 1] + "…"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with storage.open_binary(path) as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def preview_markdown(table: pa.Table, rows: int = PREVIEW_ROWS) -> str:
    """The first rows of a table as a markdown table (cells escaped and shortened)."""
    names = table.column_names
    lines = ["| " + " | ".join(names) + " |", "|" + "---|" * len(names)]
    for row in table.slice(0, rows).to_pylist():
        lines.append("| " + " | ".join(_cell(row[n]) for n in names) + " |")
    return "\n".join(lines)


def table_metadata(table: pa.Table, path: Path, **extra: object) -> Metadata:
    """Standard metadata for one written partition (``table`` is what it holds, or its head:
    the row count and the preview come from it); ``extra`` values that are not
    ``MetadataValue`` become text."""
    meta: Metadata = {
        "dagster/row_count": dg.MetadataValue.int(table.num_rows),
        "path": dg.MetadataValue.path(str(path)),
        "sha256": dg.MetadataValue.text(_sha256(path)),
        "preview": dg.MetadataValue.md(preview_markdown(table)),
    }
    for key, value in extra.items():
        meta[key] = (
            value if isinstance(value, dg.MetadataValue) else dg.MetadataValue.text(str(value))
        )
    return meta


def write_table(
    table: pa.Table,
    derived: storage.Root,
    asset: str,
    partition: dict[str, str] | None = None,
    **extra: object,
) -> Metadata:
    """Write ``table`` as the partition of ``asset`` (the asset's folder when unpartitioned)
    and return its metadata, ``extra`` included."""
    path = parquet_io.write_partition(table, derived, asset, partition)
    return table_metadata(table, path, **extra)


def write_batches(
    batches: Iterable[pa.RecordBatch | pa.Table],
    schema: pa.Schema | None,
    derived: storage.Root,
    asset: str,
    partition: dict[str, str] | None = None,
    *,
    row_group_rows: int = parquet_io.DEFAULT_ROW_GROUP_ROWS,
    **extra: object,
) -> Metadata:
    """Write a stream of record batches as the partition of ``asset`` (one row group held at
    a time) and return its metadata: preview and row count read back from the file."""
    path = parquet_io.write_partition_batches(
        batches, schema, derived, asset, partition, row_group_rows=row_group_rows
    )
    return file_metadata(path, **extra)


def file_metadata(path: Path, **extra: object) -> Metadata:
    """Metadata of a partition file already written: the preview from its first rows and the
    row count from its footer, without reading the rest."""
    with pq.ParquetFile(storage.arrow_source(path)) as parquet:
        batch = next(parquet.iter_batches(batch_size=PREVIEW_ROWS), None)
        head = (pa.Table.from_batches([batch]) if batch is not None
                else parquet.schema_arrow.empty_table())
        rows = parquet.metadata.num_rows
    meta = table_metadata(head, path, **extra)
    meta["dagster/row_count"] = dg.MetadataValue.int(rows)
    return meta


def count_by(table: pa.Table | storage.Root, column: str) -> dict[str, int]:
    """Rows per value of ``column`` (the value as text; a null is ``None``), in value order.
    ``table`` may be a written parquet file: then only that column is read."""
    if not isinstance(table, pa.Table):
        table = parquet_io.read_table(table, columns=[column])
    if table.num_rows == 0:
        return {}
    counts = pc.value_counts(table.column(column)).to_pylist()
    return {str(c["values"]): c["counts"]
            for c in sorted(counts, key=lambda c: str(c["values"]))}


def counts_text(counts: Mapping[str, int]) -> str:
    """``count_by``'s result as one line, ``value: rows, ...`` (``{}`` when empty)."""
    return ", ".join(f"{value}: {rows}" for value, rows in counts.items()) or "{}"


# --------------------------------------------------------------------- reuse across codebooks
REUSE_FILE = "reuse_key.txt"


@functools.cache
def code_fingerprint() -> str:
    """SHA-256 over the pipeline's code (the citeaudit package, the assets, the SQL files):
    output computed by other code is never reused."""
    roots = [Path(citeaudit.__file__).parent, Path(__file__).parent,
             project_file("citeaudit.sql", "sql", "x").parent]
    digest = hashlib.sha256()
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.suffix in (".py", ".sql") and path.is_file():
                digest.update(f"{root.name}/{path.relative_to(root)}\0".encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


def _plain(value: object) -> object:
    """JSON for the settings a key holds: dataclasses as their fields, anything else as text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return str(value)


def reuse_key(derived: storage.Root, asset: str, inputs: Mapping[str, dict[str, str]],
              settings: object = None, files: Iterable[object] = ()) -> str:
    """The SHA-256 naming what a partition of ``asset`` is computed from: the content of each
    input partition file (``inputs``: asset → partition; a missing one counts as absent) and
    of other ``files`` it reads (by their path under ``derived``), the codebook ``settings``
    the step reads (JSON; dataclasses by field) and the code."""
    digests = {}
    for name, where in sorted(inputs.items()):
        path = parquet_io.partition_dir(derived, name, where) / parquet_io.DATA_FILE
        digests[name] = _sha256(path) if path.exists() else "absent"
    base = storage.uri(derived).rstrip("/") + "/"
    others = {storage.uri(f).removeprefix(base): _sha256(f) for f in files}
    text = json.dumps({"asset": asset, "code": code_fingerprint(), "inputs": digests,
                       "files": others, "settings": settings}, sort_keys=True, default=_plain)
    return hashlib.sha256(text.encode()).hexdigest()


def _read_key(folder: storage.Root) -> str | None:
    path = folder / REUSE_FILE
    try:
        with storage.open_binary(path) as fh:
            return fh.read().decode("ascii", errors="replace").strip()
    except FileNotFoundError:
        return None


def reuse_other_codebook(derived: storage.Root, asset: str, partition: dict[str, str],
                         key: str, **extra: object) -> Metadata | None:
    """If another codebook's partition of this date was computed under ``key``, copy its data
    file into ``partition`` (atomically, the same bytes), write the key and return the
    metadata (``reused_from`` names the codebook; ``extra`` as :func:`write_table`); else
    None, this partition's key removed, and the caller computes and calls
    :func:`remember_key`."""
    here = parquet_io.partition_dir(derived, asset, partition)
    key_file = here / REUSE_FILE
    if key_file.exists():
        key_file.unlink()  # from here until remember_key, no key names this partition's data
    if not here.parent.exists():
        return None
    for other in sorted(here.parent.glob("codebook=*")):
        if other.name == here.name or _read_key(other) != key:
            continue
        with storage.open_binary(other / parquet_io.DATA_FILE) as fh:
            data = fh.read()
        if _read_key(other) != key:  # rewritten while it was read
            continue
        target = here / parquet_io.DATA_FILE
        storage.write_bytes_atomic(target, data)
        storage.write_bytes_atomic(key_file, (key + "\n").encode())
        return file_metadata(target, reused_from=other.name.split("=", 1)[1], **extra)
    return None


def remember_key(derived: storage.Root, asset: str, partition: dict[str, str], key: str) -> None:
    """After a partition's data is written: record the key it was computed under."""
    here = parquet_io.partition_dir(derived, asset, partition)
    storage.write_bytes_atomic(here / REUSE_FILE, (key + "\n").encode())
