"""What under a raw folder will not be read, and why (``citeaudit check``, ``ignored_inputs``).

The pipeline reads ``answers/<date>/*.jsonl``, ``warc/<date>/**/*.warc[.gz]|*.arc[.gz]`` (files
that start as a WARC or ARC record), ``annotations/support/**/*.csv|parquet``,
``annotations/source_risk/**/*.jsonl``, ``annotations/annotators.csv`` and
``codebooks/<version>.yaml``, ``citeaudit.yaml`` (operations settings), ``fetch_logs/`` (the
live crawl's logs), ``robots/`` (the robots.txt answers crawls reuse),
``import_rejections/`` (what an engine import refused) and ``import_caveats/`` (what an
import says about its dataset's selection); ``responses/``
keeps engine responses verbatim for a re-import and ``registry/`` is the demo's loopback
registry; ``annotations/samples/<date>/<codebook>.csv`` holds the drawn review samples and
``judge_cache/`` the LLM judge's cached replies. Every other file or
folder is one row here, file-level: a text file named ``x.warc.gz`` is one ``not_an_archive``
row, never records. Rows are sorted by path, so the same folder gives the same table.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pyarrow as pa

from citeaudit import layout, storage

SCHEMA = pa.schema(
    [
        ("path", pa.string()),
        ("kind", pa.string()),
        ("reason", pa.string()),
        ("detail", pa.string()),
    ]
)
TOP_LEVEL = {
    "answers": "folder",
    "warc": "folder",
    "annotations": "folder",
    "codebooks": "folder",
    "registry": "folder",
    "citeaudit.yaml": "file",
    "fetch_logs": "folder",
    "robots": "folder",
    "import_rejections": "folder",
    "import_caveats": "folder",
    "responses": "folder",
    "judge_cache": "folder",
    "ground_truth.json": "file",
    "ground_truth_support.csv": "file",
    "README.md": "file",
    ".gitkeep": "file",
}
ANNOTATION_FOLDERS = {"support": (".csv", ".parquet"), "source_risk": (".jsonl",),
                      "samples": (".csv",)}
ANNOTATION_FILES = ("annotators.csv",)

Row = tuple[str, str, str, str]


def _is_date(name: str) -> bool:
    try:
        return dt.date.fromisoformat(name).isoformat() == name
    except ValueError:
        return False


class _Rows:
    def __init__(self, raw: Path) -> None:
        self.raw = raw
        self.rows: list[Row] = []

    def add(self, path: Path, reason: str, detail: str) -> None:
        kind = "folder" if path.is_dir() else "file"
        self.rows.append((path.relative_to(self.raw).as_posix(), kind, reason, detail))

    def readable(self, path: Path) -> bool:
        """False (and a row) for a file the pipeline would read but cannot open."""
        if storage.is_remote(path) or os.access(path, os.R_OK):
            return True
        self.add(path, "unreadable", "permission denied")
        return False


def _children(folder: Path) -> list[Path]:
    return sorted(folder.iterdir()) if folder.is_dir() else []


def _files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def _check_answers(rows: _Rows, folder: Path) -> None:
    for child in _children(folder):
        if child.is_file():
            rows.add(child, "not_in_a_date_folder",
                     "answer files go in answers/<YYYY-MM-DD>/ (the observation date)")
        elif not _is_date(child.name):
            rows.add(child, "not_a_date", "folders under answers/ are named YYYY-MM-DD")
        else:
            for entry in _children(child):
                if entry.is_dir():
                    rows.add(entry, "nested_folder",
                             f"only answers/{child.name}/*.jsonl is read, not subfolders")
                elif entry.suffix != ".jsonl":
                    rows.add(entry, "wrong_suffix", "answer files end in .jsonl")
                else:
                    rows.readable(entry)


def _check_warc(rows: _Rows, folder: Path) -> None:
    for child in _children(folder):
        if child.is_file():
            rows.add(child, "not_in_a_date_folder",
                     "archives go in warc/<YYYY-MM-DD>/ (the crawl date)")
        elif not _is_date(child.name):
            rows.add(child, "not_a_date", "folders under warc/ are named YYYY-MM-DD")
        else:
            for entry in _files_under(child):
                if not entry.name.endswith(layout.ARCHIVE_SUFFIXES):
                    rows.add(entry, "wrong_suffix",
                             "archives end in .warc, .warc.gz, .arc, .arc.gz or .wacz")
                else:
                    problem = layout.archive_problem(entry)
                    if problem is not None:
                        rows.add(entry, *problem)


def _check_annotations(rows: _Rows, folder: Path) -> None:
    for child in _children(folder):
        if child.is_dir() and child.name in ANNOTATION_FOLDERS:
            suffixes = ANNOTATION_FOLDERS[child.name]
            for entry in _files_under(child):
                if entry.suffix not in suffixes:
                    rows.add(entry, "wrong_suffix",
                             f"annotations/{child.name}/ reads {' and '.join(suffixes)} files")
                else:
                    rows.readable(entry)
        elif child.is_file() and child.name in ANNOTATION_FILES:
            rows.readable(child)
        else:
            rows.add(child, "unknown_location",
                     "annotations/ holds support/, source_risk/, samples/ and annotators.csv")


def _check_codebooks(rows: _Rows, folder: Path) -> None:
    for child in _children(folder):
        if child.is_dir():
            rows.add(child, "nested_folder", "only codebooks/<version>.yaml is read")
        elif child.suffix != ".yaml":
            hint = " (rename it to .yaml)" if child.suffix == ".yml" else ""
            rows.add(child, "wrong_suffix", f"codebooks are codebooks/<version>.yaml{hint}")
        else:
            rows.readable(child)


CHECKS = {
    "answers": _check_answers,
    "warc": _check_warc,
    "annotations": _check_annotations,
    "codebooks": _check_codebooks,
}


def ignored_inputs(raw: Path) -> pa.Table:
    """One row per file or folder under ``raw`` that the pipeline will not read: its path
    relative to ``raw``, ``file``/``folder``, a reason and what was expected."""
    raw = storage.path(raw)
    rows = _Rows(raw)
    for child in _children(raw):
        expected = TOP_LEVEL.get(child.name)
        if expected is None or (expected == "folder") != child.is_dir():
            rows.add(child, "unknown_location",
                     "the raw folder holds answers/, warc/, annotations/, codebooks/, "
                     "citeaudit.yaml, fetch_logs/, import_rejections/ and responses/")
        elif child.name in CHECKS:
            CHECKS[child.name](rows, child)
    ordered = sorted(rows.rows)
    return pa.table(
        {name: pa.array([r[i] for r in ordered], pa.string()) for i, name in
         enumerate(SCHEMA.names)},
        schema=SCHEMA,
    )
