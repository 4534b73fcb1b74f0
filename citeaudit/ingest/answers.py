"""Answers ingestion: JSONL lines → ``answers``, ``claims``, ``citations`` and ``rejected_inputs``.

Python only splits files into lines; parsing and every validation rule run in DuckDB SQL
(``sql/ingest/``) over the whole batch at once. A line with any defect is rejected whole, with
one ``rejected_inputs`` row per defect naming file, line, field and reason, and its raw text kept
so nothing is lost; the rest of the batch goes on.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from citeaudit import duck, storage

# Lines validated at once: bounds memory (JSON parsing in DuckDB costs ~30x the input size).
BATCH_LINES = 2000

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
        ("source_file", pa.string()),
        ("source_line", pa.int64()),
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


def iter_line_batches(files: list[Path], root: Path, batch_lines: int) -> Iterator[pa.Table]:
    """Split JSONL files into batches of (file, line, text, utf8_ok), in file and line order.

    Blank lines are skipped, not rejected. ``file`` is the path relative to ``root`` so rejection
    rows name the file as the user sees it. Batches keep memory flat however large a day is.
    """
    columns: tuple[list, list, list, list] = ([], [], [], [])
    for path in files:
        name = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
        with storage.open_binary(path) as fh:
            for number, raw_line in enumerate(fh, start=1):
                if not raw_line.strip():
                    continue
                try:
                    text, ok = raw_line.decode("utf-8").rstrip("\r\n"), True
                except UnicodeDecodeError:
                    text, ok = raw_line.decode("utf-8", errors="replace").rstrip("\r\n"), False
                for column, value in zip(columns, (name, number, text, ok), strict=True):
                    column.append(value)
                if len(columns[0]) >= batch_lines:
                    yield pa.table(list(columns), schema=LINES_SCHEMA)
                    columns = ([], [], [], [])
    if columns[0]:
        yield pa.table(list(columns), schema=LINES_SCHEMA)


IMPORT_REJECTIONS_DIR = "import_rejections"


def import_rejections(raw: Path, observation_date: str) -> pa.Table:
    """The ``rejected_inputs`` rows an engine import left in ``import_rejections/<date>/``.

    ``citeaudit import openai|gemini|anthropic|perplexity`` writes there each defect of a
    response it could not turn into an answer (the raw response is kept under ``responses/``);
    they join the answers lines' rejections so no bad input vanishes.
    """
    folder = raw / IMPORT_REJECTIONS_DIR / observation_date
    files = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
    if not files:
        return REJECTED_SCHEMA.empty_table()
    con = duck.connect()
    table = duck.query(con, "ingest/select_import_rejections",
                       {"paths": [str(f) for f in files]})
    return table.cast(REJECTED_SCHEMA)


def _ingest_batch(con: duckdb.DuckDBPyConnection, lines: pa.Table) -> IngestResult:
    """Validate one batch against the ids of earlier batches; extract its accepted answers."""
    for table in (
        "answer_json",
        "claim_objects",
        "citation_objects",
        "batch_ids",
        "accepted_answers",
        "typed_answers",
    ):
        con.execute(f"DROP TABLE IF EXISTS {table}")  # constant names, no values formatted
    con.register("answer_lines", lines)
    duck.create_table(con, "answer_json", "ingest/parse_answer_lines")
    duck.create_table(con, "claim_objects", "ingest/unnest_claim_objects")
    duck.create_table(con, "citation_objects", "ingest/unnest_citation_objects")
    duck.create_table(con, "batch_ids", "ingest/select_line_ids")
    defects = duck.query(con, "ingest/select_answer_defects")
    duck.execute(con, "ingest/insert_seen_ids")
    con.register("answer_defects", defects)
    duck.create_table(con, "accepted_answers", "ingest/select_accepted_answers")
    duck.create_table(con, "typed_answers", "ingest/type_accepted_answers")
    answers = duck.query(con, "ingest/select_answers")
    claims = duck.query(con, "ingest/select_claims")
    citations = duck.query(con, "ingest/select_citations")
    rejected = duck.query(con, "ingest/select_rejected_inputs")
    return IngestResult(answers, claims, citations, rejected.cast(REJECTED_SCHEMA))


def _concat(parts: list[pa.Table], sort_keys: list[str]) -> pa.Table:
    table = pa.concat_tables(parts)
    return table.sort_by([(key, "ascending") for key in sort_keys])


def ingest_batches(batches: Iterable[pa.Table]) -> IngestResult:
    """Validate and split batches of lines (in file order) into the four ingestion tables.

    Every rule is per line except duplicate ids, which are checked against every earlier batch,
    so the result does not depend on the batch size.
    """
    con = duck.connect()
    duck.execute(con, "ingest/create_seen_ids")
    parts = [_ingest_batch(con, batch) for batch in batches]
    if not parts:
        parts = [_ingest_batch(con, LINES_SCHEMA.empty_table())]
    return IngestResult(
        answers=_concat([p.answers for p in parts], ["answer_id"]),
        claims=_concat([p.claims for p in parts], ["answer_id", "claim_index"]),
        citations=_concat(
            [p.citations for p in parts], ["answer_id", "claim_index", "citation_index"]
        ),
        rejected=_concat([p.rejected for p in parts],
                         ["source_file", "source_line", "field", "reason"]),
    )


def ingest_files(files: list[Path], root: Path, batch_lines: int = BATCH_LINES) -> IngestResult:
    """Ingest answers JSONL files (paths reported relative to ``root``), batch by batch."""
    return ingest_batches(iter_line_batches(files, root, batch_lines))
