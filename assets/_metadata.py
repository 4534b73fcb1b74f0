"""Writing an asset's partition and describing it, shared by every asset.

:func:`write_table` and :func:`write_batches` write one partition through
:mod:`citeaudit.parquet_io` (atomically) and return its materialization metadata: row count,
file path, the file's SHA-256 (so ``citeaudit status`` can tell a rerun that wrote the same
bytes from a change), a small preview, and the asset's own figures. :func:`file_metadata`
describes a partition file a stage wrote itself (streamed); :func:`count_by` and
:func:`counts_text` give the per-value row counts several assets report.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path

import dagster as dg
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from citeaudit import parquet_io, storage

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
