"""Materialization metadata shared by every asset: row count, file path, the file's SHA-256
(so ``citeaudit status`` can tell a rerun that wrote the same bytes from a change) and a small
preview."""

from __future__ import annotations

import hashlib
from pathlib import Path

import dagster as dg
import pyarrow as pa

from citeaudit import storage

PREVIEW_ROWS = 5
PREVIEW_CELL = 60


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


def table_metadata(table: pa.Table, path: Path, **extra: object) -> dict[str, dg.MetadataValue]:
    """Standard metadata for one written partition."""
    meta: dict[str, dg.MetadataValue] = {
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
