"""Source-risk JSONL lines in bounded batches: (file, line, raw) Arrow tables, dated in SQL.

The files are read in blocks of bytes and split into lines with numpy (no Python string per
line); blank lines are skipped, a trailing CR is dropped and invalid UTF-8 is kept, replaced,
exactly as :func:`citeaudit.layout.source_risk_lines` does. Each line belongs to the date of
its answer (``sql/source_risk/select_dated_lines.sql``); a line no known answer dates goes to
the answer date its file is named after, else to the first answer date of the raw folder,
where validation rejects it with its reason.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from citeaudit import duck, layout, storage

LINES_SCHEMA = pa.schema([("file", pa.string()), ("line", pa.int64()), ("raw", pa.string())])
BLOCK_BYTES = 8 << 20
DATES_SCHEMA = pa.schema([("answer_id", pa.string()), ("observation_date", pa.string())])


def _decode(chunk: bytes, starts: np.ndarray, ends: np.ndarray) -> pa.Array:
    """The lines of ``chunk`` (``[start, end)``, newline excluded) as a string array."""
    offsets = np.empty(len(starts) + 1, dtype=np.int64)
    offsets[:-1] = starts
    offsets[-1] = ends[-1] if len(ends) else 0
    binary = pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(starts),
                                              [None, pa.py_buffer(offsets), pa.py_buffer(chunk)])
    # each value still ends with the newline that separates it from the next: trim it below
    try:
        text = binary.cast(pa.large_string())
    except pa.ArrowInvalid:  # invalid UTF-8 somewhere in the block: replace, line by line
        text = pa.array([chunk[s:e].decode("utf-8", errors="replace")
                         for s, e in zip(starts.tolist(), ends.tolist(), strict=True)],
                        pa.large_string())
    return pc.utf8_rtrim(text, characters="\r\n").cast(pa.string())


def _nonblank(raw: pa.Array) -> pa.Array:
    """Which lines are not blank by Python's ``str.strip`` (any printable ASCII settles it)."""
    sure = pc.match_substring_regex(raw, r"[!-~]")
    if pc.all(sure).as_py():
        return sure
    doubt = pc.indices_nonzero(pc.invert(sure)).to_pylist()
    values = sure.to_pylist()
    for i, text in zip(doubt, raw.take(doubt).to_pylist(), strict=True):
        values[i] = bool(text.strip())
    return pa.array(values, pa.bool_())


def file_batches(path: Path, label: str, block_bytes: int = BLOCK_BYTES) -> Iterator[pa.Table]:
    """The non-blank lines of one file, in order, as LINES_SCHEMA tables of about a block."""
    number = 0
    carry = b""
    with storage.open_binary(path) as fh:
        while True:
            block = fh.read(block_bytes)
            data = carry + block if carry else block
            if not data:
                return
            if block:
                cut = data.rfind(b"\n") + 1
                if cut == 0:  # one line longer than a block: read on
                    carry = data
                    continue
                chunk, carry = data[:cut], data[cut:]
            else:
                chunk, carry = data, b""
            arr = np.frombuffer(chunk, dtype=np.uint8)
            ends = np.flatnonzero(arr == 10) + 1
            if not len(ends) or ends[-1] != len(chunk):
                ends = np.append(ends, len(chunk))
            starts = np.concatenate(([0], ends[:-1]))
            raw = _decode(chunk, starts, ends)
            numbers = pa.array(np.arange(number + 1, number + 1 + len(starts), dtype=np.int64))
            number += len(starts)
            keep = _nonblank(raw)
            table = pa.table({"file": pa.array([label] * len(starts), pa.string()),
                              "line": numbers, "raw": raw}, schema=LINES_SCHEMA).filter(keep)
            if table.num_rows:
                yield table
            if not block:
                return


def _python_answer_ids(texts: list[str]) -> list[str | None]:
    out = []
    for text in texts:
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        found = value.get("answer_id") if isinstance(value, dict) else None
        out.append(found if isinstance(found, str) else None)
    return out


def dated_batches(raw: Path, date: str, answer_dates: pa.Table,
                  con: duckdb.DuckDBPyConnection | None = None,
                  block_bytes: int = BLOCK_BYTES) -> Iterator[pa.Table]:
    """The source-risk lines of one observation date, in file and line order, in batches.

    ``answer_dates`` (DATES_SCHEMA) dates every known answer id. The answer id is read in SQL;
    lines DuckDB does not parse as JSON are read by Python's ``json`` (as the layout does).
    """
    con = con or duck.connect()
    con.register("sr_answer_dates", answer_dates)
    folder = storage.path(raw) / layout.SOURCE_RISK_DIR
    audited = layout.answer_dates(raw)
    first_date = audited[0] if audited else None
    for path in layout.source_risk_files(raw):
        fallback = path.stem if path.stem in audited else first_date
        for batch in file_batches(path, path.relative_to(folder).as_posix(), block_bytes):
            con.register("sr_line_batch", batch)
            ids = duck.query(con, "source_risk/select_line_answers")
            answer_id = ids.column("answer_id")
            doubt = pc.indices_nonzero(pc.invert(ids.column("parsed"))).to_pylist()
            if doubt:
                values = answer_id.to_pylist()
                found = _python_answer_ids(batch.column("raw").take(doubt).to_pylist())
                for i, value in zip(doubt, found, strict=True):
                    values[i] = value
                answer_id = pa.array(values, pa.string())
            con.register("sr_line_ids", pa.table({"line": batch.column("line"),
                                                  "answer_id": answer_id}))
            keep = duck.query(con, "source_risk/select_dated_lines",
                              {"date": date, "fallback": fallback}).column("keep")
            kept = batch.filter(keep)
            if kept.num_rows:
                yield kept
