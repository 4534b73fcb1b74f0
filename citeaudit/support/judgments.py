"""Support judgments (the support rubric and the three-layer audit's L2 support layer,
docs/references.md): annotation files, codebook mapping, rejections.

``annotations/support/*.csv|parquet`` hold one judgment per row (docs/inputs.md):
``claim_id, citation_id, annotator_id, label, evidence_span, annotated_at, codebook_version,
grader`` plus two optional columns, ``schema`` (which label map of the codebook the raw label
belongs to; default: the codebook's ``support_schema``) and ``atom_id`` (the atomic proposition
of a compound claim the row judges; empty: the whole claim). An empty ``citation_id`` is a
claim-level judgment (the claim against all its citations jointly, as ExpertQA judges).

This module reads the files (whole files through pyarrow, never row by row in Python) and the
optional annotator registry ``annotations/annotators.csv`` (``annotator_id, kind`` with kind
``human`` or ``grader``) into Arrow tables; every rule — codebook mapping, rejection reasons,
adjudication, aggregation over atoms, review sampling — is DuckDB SQL in ``sql/support/``
(adjudication is run by :mod:`citeaudit.support.adjudication`). See ``docs/codebook.md`` for
the rules in prose.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from citeaudit import duck, parquet_io, storage
from citeaudit.codebook import Codebook
from citeaudit.layout import answer_dates, codebook_versions

REQUIRED_COLUMNS = ("claim_id", "citation_id", "annotator_id", "label", "evidence_span",
                    "annotated_at", "codebook_version", "grader")
OPTIONAL_COLUMNS = ("schema", "atom_id")
COLUMNS = REQUIRED_COLUMNS + OPTIONAL_COLUMNS
SUPPORT_DIR = Path("annotations") / "support"
REGISTRY_FILE = Path("annotations") / "annotators.csv"
ANNOTATOR_KINDS = ("human", "grader")
SOURCE = "support_annotations"
_ISO_PREFIX = re.compile(r"^(\d{4}-\d{2}-\d{2})")

ROWS_SCHEMA = pa.schema(
    [("file", pa.string()), ("line", pa.int64()), ("file_date", pa.string())]
    + [(c, pa.string()) for c in COLUMNS]
)
REJECTED_SCHEMA = pa.schema([
    ("source", pa.string()), ("source_file", pa.string()), ("source_line", pa.int64()),
    ("field", pa.string()), ("reason", pa.string()), ("detail", pa.string()),
    ("raw", pa.string()),
])


@dataclass(frozen=True)
class AnnotationFiles:
    """Every support annotation row of a raw folder, and the file-level defects found reading."""

    rows: pa.Table  # ROWS_SCHEMA
    file_defects: pa.Table  # file, line, file_date, field, reason, detail, raw


def annotation_files(raw: Path) -> list[Path]:
    """The support annotation files of a raw folder, in a stable order."""
    folder = storage.path(raw) / SUPPORT_DIR
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in (".csv", ".parquet"))


def _file_date(rel: str) -> str | None:
    m = _ISO_PREFIX.match(Path(rel).name)
    return m.group(1) if m else None


def _read_csv(path: Path, defects: list[dict], rel: str) -> pa.Table | None:
    """One CSV file as strings, with each record's line (header = 1); bad records to defects."""
    bad: list[tuple[int, str, int]] = []

    def on_invalid(row) -> str:
        bad.append((row.number, row.text, row.actual_columns))
        return "skip"

    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            names = next(csv.reader(fh), [])
        table = pacsv.read_csv(
            storage.arrow_source(path),
            read_options=pacsv.ReadOptions(use_threads=False),
            parse_options=pacsv.ParseOptions(invalid_row_handler=on_invalid,
                                             ignore_empty_lines=False,
                                             newlines_in_values=True),
            convert_options=pacsv.ConvertOptions(
                column_types={n: pa.string() for n in names},
                strings_can_be_null=False, quoted_strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, UnicodeDecodeError, OSError) as exc:
        defects.append({"file": rel, "line": 0, "field": None, "reason": "unreadable_file",
                        "detail": str(exc)[:300], "raw": None})
        return None
    for number, text, actual in bad:
        defects.append({"file": rel, "line": number, "field": None,
                        "reason": "wrong_column_count",
                        "detail": f"{actual} columns, expected {table.num_columns}",
                        "raw": text[:2000]})
    # Records are numbered 1 (header), 2, ...; skipped ones leave gaps the kept rows skip.
    total = table.num_rows + len(bad)
    numbers = np.arange(2, total + 2, dtype=np.int64)
    if bad:
        numbers = numbers[~np.isin(numbers, [b[0] for b in bad])]
    return table.append_column("line", pa.array(numbers[: table.num_rows], pa.int64()))


def _read_parquet(path: Path, defects: list[dict], rel: str) -> pa.Table | None:
    try:
        table = parquet_io.read_table(path)
    except (pa.ArrowInvalid, OSError) as exc:
        defects.append({"file": rel, "line": 0, "field": None, "reason": "unreadable_file",
                        "detail": str(exc)[:300], "raw": None})
        return None
    cols = {}
    for name in table.column_names:
        col = table.column(name).cast(pa.string())
        cols[name] = col.fill_null("")
    table = pa.table(cols) if cols else table
    return table.append_column("line", pa.array(np.arange(1, table.num_rows + 1), pa.int64()))


def read_annotations(raw: Path) -> AnnotationFiles:
    """Read every support annotation file under ``raw`` into one string table.

    A file missing a required column is rejected whole (one defect naming the column); a CSV
    record with the wrong number of fields is rejected alone; blank lines are skipped.
    """
    raw = storage.path(raw)
    defects: list[dict] = []
    parts: list[pa.Table] = []
    for path in annotation_files(raw):
        rel = path.relative_to(raw).as_posix()
        table = (_read_csv if path.suffix == ".csv" else _read_parquet)(path, defects, rel)
        if table is None:
            continue
        missing = [c for c in REQUIRED_COLUMNS if c not in table.column_names]
        if missing:
            defects.append({"file": rel, "line": 1, "field": missing[0],
                            "reason": "missing_column",
                            "detail": "file lacks column(s) " + ", ".join(missing),
                            "raw": ",".join(table.column_names[:-1])})  # minus "line"
            continue
        n = table.num_rows
        cols = {"file": pa.array([rel] * n, pa.string()), "line": table.column("line"),
                "file_date": pa.array([_file_date(rel)] * n, pa.string())}
        for c in COLUMNS:
            cols[c] = (table.column(c) if c in table.column_names
                       else pa.array([""] * n, pa.string()))
        parts.append(pa.table(cols, schema=ROWS_SCHEMA))
    rows = pa.concat_tables(parts) if parts else ROWS_SCHEMA.empty_table()
    for d in defects:
        d["file_date"] = _file_date(d["file"])
    defect_schema = pa.schema([("file", pa.string()), ("line", pa.int64()),
                               ("file_date", pa.string()), ("field", pa.string()),
                               ("reason", pa.string()), ("detail", pa.string()),
                               ("raw", pa.string())])
    return AnnotationFiles(rows, pa.Table.from_pylist(defects, schema=defect_schema))


def read_registry(raw: Path) -> pa.Table | None:
    """``annotations/annotators.csv`` (annotator_id, kind), or None when the file is absent.

    Without a registry the annotator check is skipped (and said so in the asset metadata); a
    registry that exists but is malformed is an error, not an empty registry.
    """
    path = storage.path(raw) / REGISTRY_FILE
    if not path.is_file():
        return None
    table = pacsv.read_csv(storage.arrow_source(path), convert_options=pacsv.ConvertOptions(
        column_types={"annotator_id": pa.string(), "kind": pa.string()},
        strings_can_be_null=False))
    for col in ("annotator_id", "kind"):
        if col not in table.column_names:
            raise ValueError(f"{path}: column {col!r} is missing")
    ids = table.column("annotator_id").to_pylist()
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"{path}: annotator_id listed more than once: {', '.join(dup)}")
    kinds = set(table.column("kind").to_pylist())
    if not kinds <= set(ANNOTATOR_KINDS):
        raise ValueError(f"{path}: kind must be one of {ANNOTATOR_KINDS}, found "
                         f"{sorted(kinds - set(ANNOTATOR_KINDS))}")
    return table.select(["annotator_id", "kind"])


def label_map_table(book: Codebook) -> pa.Table:
    """The codebook's label maps as rows (schema, raw_label, label)."""
    rows = [{"schema": s, "raw_label": r, "label": lab}
            for s, m in sorted(book.label_maps.items()) for r, lab in sorted(m.items())]
    return pa.Table.from_pylist(rows, schema=pa.schema(
        [("schema", pa.string()), ("raw_label", pa.string()), ("label", pa.string())]))


def default_schema(book: Codebook) -> str:
    """The label map a row without a ``schema`` value is read with (see docs/codebook.md)."""
    if book.support_schema:
        return book.support_schema
    return next(iter(book.label_maps)) if len(book.label_maps) == 1 else ""


def _claim_index(con: duckdb.DuckDBPyConnection, derived: Path) -> None:
    """Register every date's claims and citations (the ids a judgment may refer to)."""
    empty = {"claims": {"claim_id": pa.string(), "answer_id": pa.string()},
             "citations": {"claim_id": pa.string(), "citation_id": pa.string()}}
    for asset, cols in empty.items():
        if list((storage.path(derived) / asset).glob(f"*/{parquet_io.DATA_FILE}")):
            glob = parquet_io.dataset_glob(storage.path(derived), asset, 1)
            duck.create_table(con, f"all_{asset}", f"support/select_all_{asset}",
                              {"glob": glob})
        else:
            schema = pa.schema(list(cols.items()) + [("observation_date", pa.string())])
            con.register(f"all_{asset}", schema.empty_table())


def classify(raw: Path, derived: Path, book: Codebook) -> pa.Table:
    """Every annotation row of ``raw`` read under codebook ``book``: mapped label, the date it
    belongs to, and the first rejection reason (NULL when accepted). See sql/support."""
    files = read_annotations(raw)
    registry = read_registry(raw)
    versions = codebook_versions(raw)
    dates = answer_dates(raw)
    con = duck.connect()
    con.register("annotation_rows", files.rows)
    con.register("file_defects", files.file_defects)
    con.register("label_map", label_map_table(book))
    con.register("known_versions", pa.table({"version": pa.array(versions, pa.string())}))
    con.register("annotators", registry if registry is not None else pa.table(
        {"annotator_id": pa.array([], pa.string()), "kind": pa.array([], pa.string())}))
    _claim_index(con, derived)
    return duck.query(con, "support/classify_annotations", {
        "version": book.version,
        "default_schema": default_schema(book),
        "registry_present": registry is not None,
        "fallback_date": dates[0] if dates else None,
    })


def judgments(classified: pa.Table, date: str) -> tuple[pa.Table, pa.Table]:
    """(support_judgments, rejected_annotations) of one observation date."""
    con = duck.connect()
    con.register("classified", classified)
    accepted = duck.query(con, "support/select_support_judgments", {"date": date})
    rejected = duck.query(con, "support/select_rejected_annotations",
                          {"date": date, "source": SOURCE})
    return accepted, rejected


def raw_json(row: dict) -> str:
    """A row as canonical JSON (for the ``raw`` column of a rejection)."""
    return json.dumps(row, sort_keys=True, ensure_ascii=False)
