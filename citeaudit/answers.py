"""Answers ingestion: JSONL lines → ``answers``, ``claims``, ``citations`` and ``rejected_inputs``.

Python only splits files into lines; parsing and every validation rule run in DuckDB SQL
(``sql/ingest/``) over the whole batch at once. A line with any defect is rejected whole, with
one ``rejected_inputs`` row per defect naming file, line, field and reason, and its raw text kept
so nothing is lost; the rest of the batch goes on.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from citeaudit import duck

LINES_SCHEMA = pa.schema(
    [
        ("file", pa.string()),
        ("line", pa.int64()),
        ("text", pa.string()),
        ("utf8_ok", pa.bool_()),
    ]
)

REJECTED_SCHEMA = pa.schema(
    [
        ("source", pa.string()),
        ("file", pa.string()),
        ("line", pa.int64()),
        ("field", pa.string()),
        ("reason", pa.string()),
        ("detail", pa.string()),
        ("raw", pa.string()),
    ]
)


@dataclass(frozen=True)
class IngestResult:
    """The four tables one ingestion produces."""

    answers: pa.Table
    claims: pa.Table
    citations: pa.Table
    rejected: pa.Table


def answer_files(raw: Path, observation_date: str) -> list[Path]:
    """The answers JSONL files of one observation date, in a stable order."""
    folder = raw / "answers" / observation_date
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


def read_lines(files: list[Path], root: Path) -> pa.Table:
    """Split JSONL files into (file, line, text, utf8_ok); blank lines are skipped, not rejected.

    ``file`` is the path relative to ``root`` so rejection rows name the file as the user sees it.
    """
    names: list[str] = []
    numbers: list[int] = []
    texts: list[str] = []
    utf8: list[bool] = []
    for path in files:
        name = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
        with open(path, "rb") as fh:
            for number, raw_line in enumerate(fh, start=1):
                if not raw_line.strip():
                    continue
                try:
                    text = raw_line.decode("utf-8").rstrip("\r\n")
                    ok = True
                except UnicodeDecodeError:
                    text = raw_line.decode("utf-8", errors="replace").rstrip("\r\n")
                    ok = False
                names.append(name)
                numbers.append(number)
                texts.append(text)
                utf8.append(ok)
    return pa.table([names, numbers, texts, utf8], schema=LINES_SCHEMA)


def ingest_lines(lines: pa.Table, con: duckdb.DuckDBPyConnection | None = None) -> IngestResult:
    """Validate and split parsed lines into the four ingestion tables."""
    con = con or duck.connect()
    con.register("answer_lines", lines)
    duck.create_table(con, "answer_json", "ingest/parse_answer_lines")
    defects = duck.query(con, "ingest/select_answer_defects")
    con.register("answer_defects", defects)
    duck.create_table(con, "accepted_answers", "ingest/select_accepted_answers")
    duck.create_table(con, "typed_answers", "ingest/type_accepted_answers")
    answers = duck.query(con, "ingest/select_answers")
    claims = duck.query(con, "ingest/select_claims")
    citations = duck.query(con, "ingest/select_citations")
    con.register("defects_found", defects)
    rejected = duck.query(con, "ingest/select_rejected_inputs")
    return IngestResult(answers, claims, citations, rejected.cast(REJECTED_SCHEMA))


def ingest_files(files: list[Path], root: Path) -> IngestResult:
    """Ingest answers JSONL files (paths reported relative to ``root``)."""
    return ingest_lines(read_lines(files, root))
