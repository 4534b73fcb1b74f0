"""The raw input layout (DESIGN §4): which dates and files a raw folder holds.

``answers/<observation_date>/*.jsonl``, ``warc/<crawl_date>/**/*.warc[.gz]|*.arc[.gz]``,
``annotations/``, ``codebooks/<version>.yaml``. Folders whose names are not ISO dates are
reported, not silently read or silently dropped.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

ARCHIVE_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz")
# WARCs citeaudit's own crawl writes: warc/<crawl_date>/citeaudit-<observation_date>-<seq>.warc.gz.
# They belong to their observation date's captures, whatever day they were crawled.
FETCHED_WARC_RE = re.compile(r"^citeaudit-(\d{4}-\d{2}-\d{2})-(\d{5})\.warc\.gz$")
DATED_FOLDERS = ("answers", "warc")


def is_archive(path: Path) -> bool:
    """True for the file names the capture index reads."""
    return path.is_file() and path.name.endswith(ARCHIVE_SUFFIXES)


def warc_files(raw: Path, crawl_date: str) -> list[Path]:
    """Every WARC/ARC file of one crawl date, recursively, in a stable order."""
    folder = raw / "warc" / crawl_date
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*") if is_archive(p))


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
