"""The raw input layout (docs/inputs.md): which dates and files a raw folder holds.

``answers/<observation_date>/*.jsonl``, ``warc/<crawl_date>/**/*.warc[.gz]|*.arc[.gz]|*.wacz``,
``annotations/``, ``codebooks/<version>.yaml``. Folders whose names are not ISO dates are
reported, not silently read or silently dropped.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import zlib
from collections.abc import Mapping
from pathlib import Path

from citeaudit import storage

ARCHIVE_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz", ".wacz")
# WARCs citeaudit's own crawl writes: warc/<crawl_date>/citeaudit-<observation_date>-<seq>.warc.gz,
# and -archive-<name> before .warc.gz for captures copied from a web archive (group 3).
# They belong to their observation date's captures, whatever day they were crawled.
FETCHED_WARC_RE = re.compile(
    r"^citeaudit-(\d{4}-\d{2}-\d{2})-(\d{5})(?:-archive-([a-z0-9_]+))?\.warc\.gz$")
DATED_FOLDERS = ("answers", "warc")
# what an import records about its dataset's selection and limits (read by the report)
CAVEATS_DIR = "import_caveats"
SOURCE_RISK_DIR = Path("annotations") / "source_risk"
# What the first record of a WARC or an ARC file starts with (after gzip, if any).
ARCHIVE_MAGIC = (b"WARC/", b"filedesc://")
GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGIC = b"PK\x03\x04"  # a WACZ is a zip (its hashes are checked when it is indexed)
SNIFF_BYTES = 4096


def is_archive(path: Path) -> bool:
    """True for the file names the capture index reads."""
    return path.is_file() and path.name.endswith(ARCHIVE_SUFFIXES)


def archive_problem(path: Path) -> tuple[str, str] | None:
    """Why a file named as an archive cannot be one, by its first bytes: (reason, detail), or
    None when it starts as a WARC or ARC record does (``WARC/`` or ``filedesc://``, after gzip
    when it is gzipped). A text file named ``x.warc.gz`` is not read as 20 junk records."""
    try:
        with path.open("rb") as fh:
            head = fh.read(SNIFF_BYTES)
    except OSError as exc:
        return "unreadable", f"{type(exc).__name__}: {exc.strerror or exc}"
    if not head:
        return "empty_file", "0 bytes"
    if path.name.lower().endswith(".wacz"):
        if head.startswith(ZIP_MAGIC):
            return None
        shown = head[:8].decode("latin-1").encode("unicode_escape").decode("ascii")
        return "not_an_archive", f"starts with '{shown}', not a zip (a WACZ is one)"
    if head.startswith(GZIP_MAGIC):
        try:
            head = zlib.decompressobj(wbits=31).decompress(head)
        except zlib.error as exc:
            return "not_an_archive", f"gzip header but the data does not decompress: {exc}"
    start = head.lstrip()
    if start.startswith(ARCHIVE_MAGIC):
        return None
    shown = start[:24].decode("latin-1").encode("unicode_escape").decode("ascii")
    return "not_an_archive", f"starts with '{shown}', not 'WARC/' or 'filedesc://'"


def warc_files(raw: Path, crawl_date: str) -> list[Path]:
    """Every WARC/ARC file of one crawl date, recursively, in a stable order; a file whose first
    bytes are not an archive's is left out (``citeaudit check`` lists it in ``ignored_inputs``)."""
    folder = raw / "warc" / crawl_date
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*") if is_archive(p) and archive_problem(p) is None)


def source_risk_files(raw: Path) -> list[Path]:
    """Every ``*.jsonl`` under ``annotations/source_risk/`` (recursively), in a stable order.

    Any name is read: each record is dated by its answer, not by its file's name."""
    folder = storage.path(raw) / SOURCE_RISK_DIR
    return sorted(p for p in folder.rglob("*.jsonl") if p.is_file()) if folder.is_dir() else []


def _is_iso_date(name: str) -> bool:
    try:
        return dt.date.fromisoformat(name).isoformat() == name
    except ValueError:
        return False


def _only_fetched(folder: Path) -> bool:
    files = [p for p in folder.rglob("*") if is_archive(p)]
    return bool(files) and all(FETCHED_WARC_RE.match(p.name) for p in files)


def discover_dates(raw: Path) -> tuple[list[str], list[Path]]:
    """(dates found under answers/ and warc/, sorted; folders there that are not dates)."""
    dates: set[str] = set()
    strays: list[Path] = []
    for top in DATED_FOLDERS:
        folder = raw / top
        if not folder.is_dir():
            continue
        for child in sorted(folder.iterdir()):
            if child.is_dir() and _is_iso_date(child.name):
                if top == "warc" and _only_fetched(child):
                    continue  # a crawl day of citeaudit's own fetches, not a date of inputs
                dates.add(child.name)
            elif child.is_dir():
                strays.append(child)
    return sorted(dates), strays


def codebook_versions(raw: Path) -> list[str]:
    """Codebook versions: the stems of ``codebooks/*.yaml``."""
    folder = raw / "codebooks"
    return sorted(p.stem for p in folder.glob("*.yaml")) if folder.is_dir() else []


def answer_dates(raw: Path) -> list[str]:
    """Observation dates: the ISO-dated folders under ``answers/``."""
    folder = raw / "answers"
    if not folder.is_dir():
        return []
    return sorted(c.name for c in folder.iterdir() if c.is_dir() and _is_iso_date(c.name))


def _answer_id(text: str) -> str | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    found = value.get("answer_id") if isinstance(value, dict) else None
    return found if isinstance(found, str) else None


def source_risk_lines(
    raw: Path, date: str, date_of_answer: Mapping[str, str]
) -> list[tuple[str, int, str]]:
    """The source-risk lines of one observation date, as (file, line, text), from every file of
    :func:`source_risk_files`. A line belongs to the date of its answer (``date_of_answer``:
    answer id → observation date); a line no known answer dates (malformed, unknown answer)
    goes to the answer date its file is named after, else to the first answer date of ``raw``,
    where validation rejects it with its reason: nothing is silently dropped. ``file`` is the
    path under the folder."""
    folder = storage.path(raw) / SOURCE_RISK_DIR
    audited = answer_dates(raw)  # the dates a judged run audits
    first_date = audited[0] if audited else None
    rows: list[tuple[str, int, str]] = []
    for path in source_risk_files(raw):
        label = path.relative_to(folder).as_posix()
        fallback = path.stem if path.stem in audited else first_date
        with path.open("rb") as fh:
            for number, data in enumerate(fh, 1):
                text = data.decode("utf-8", errors="replace").rstrip("\r\n")
                if not text.strip():
                    continue
                owner = date_of_answer.get(_answer_id(text) or "", fallback)
                if owner == date:
                    rows.append((label, number, text))
    return rows


def import_caveats(raw: Path, date: str) -> list[dict]:
    """The caveats imports recorded for ``date`` (``import_caveats/*.json``), in file order:
    ``{dataset, source, dates, caveats}`` each; none when there are none."""
    folder = storage.path(raw) / CAVEATS_DIR
    found = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if date in doc.get("dates", []):
            found.append(doc)
    return found
