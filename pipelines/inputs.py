"""What the raw folder holds, as the sensors, the schedule and ``citeaudit status`` see it.

Codebook digests (a version is a file; its bytes are its identity), fingerprints of the files of
one date (so a sensor notices a new or rewritten answer/WARC file), the newest modification time
of the inputs of a partition (so ``status`` can call a partition stale), and which answer dates a
crawl date can change (a capture is aligned to answers up to the codebook's window away).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
from collections.abc import Iterable
from pathlib import Path

from citeaudit import codebook as codebook_lib
from citeaudit import layout


def codebook_file(raw: Path, version: str) -> Path:
    """``codebooks/<version>.yaml`` under ``raw``."""
    return raw / "codebooks" / f"{version}.yaml"


def codebook_digests(raw: Path) -> dict[str, str]:
    """Every codebook version on disk with the SHA-256 of its file's bytes."""
    return {
        version: hashlib.sha256(codebook_file(raw, version).read_bytes()).hexdigest()
        for version in layout.codebook_versions(raw)
    }


def date_files(raw: Path, date: str) -> list[Path]:
    """The input files of one date: ``answers/<date>/*`` and ``warc/<date>/**`` (sorted)."""
    files: list[Path] = []
    for top in layout.DATED_FOLDERS:
        folder = raw / top / date
        if folder.is_dir():
            files += sorted(p for p in folder.rglob("*") if p.is_file())
    return files


def fingerprint(raw: Path, files: Iterable[Path]) -> str:
    """A digest of the names, sizes and modification times of ``files`` (cheap: no reading).

    A new, removed, grown or rewritten file changes it; the same files give the same digest.
    """
    h = hashlib.sha256()
    for path in sorted(files):
        st = path.stat()
        h.update(f"{path.relative_to(raw).as_posix()}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def newest_mtime(files: Iterable[Path]) -> float | None:
    """The latest modification time among ``files`` (seconds), or None when there are none."""
    times = [p.stat().st_mtime for p in files if p.is_file()]
    return max(times) if times else None


def annotation_files(raw: Path) -> list[Path]:
    """Every file under ``annotations/`` (judgments read by the date × codebook stages)."""
    folder = raw / "annotations"
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []


def window_days(raw: Path, versions: Iterable[str]) -> tuple[int, int]:
    """The widest alignment window (days before, days after) among the codebooks given.

    An unreadable codebook contributes the defaults (7 before, 1 after): the widest window only
    decides which dates to re-examine, so erring wide is safe.
    """
    before, after = 7, 1
    for version in versions:
        try:
            window = codebook_lib.load_version(raw, version).alignment_window
        except (codebook_lib.CodebookError, OSError):
            continue
        before = max(before, math.ceil(window.before_days))
        after = max(after, math.ceil(window.after_days))
    return before, after


def _shift(date: str, days: int) -> str:
    return (dt.date.fromisoformat(date) + dt.timedelta(days=days)).isoformat()


def crawl_dates_for(answer_date: str, window: tuple[int, int]) -> list[str]:
    """The crawl dates whose captures an answer date can be aligned to (its window, in days)."""
    before, after = window
    return [_shift(answer_date, d) for d in range(-before, after + 1)]


def answer_dates_for(raw: Path, crawl_date: str, window: tuple[int, int]) -> list[str]:
    """The answer dates on disk that a capture crawled on ``crawl_date`` can be aligned to.

    A capture lies within [reference - before, reference + after], so the reference (answer)
    dates it can serve are [crawl - after, crawl + before].
    """
    before, after = window
    candidates = {_shift(crawl_date, d) for d in range(-after, before + 1)}
    return [d for d in layout.answer_dates(raw) if d in candidates]


def judged_input_files(
    raw: Path, answer_date: str, version: str, window: tuple[int, int]
) -> list[Path]:
    """Every raw file a date × codebook partition may read: the answers of its date, the WARCs
    of its window, the annotations, and its codebook file."""
    files = [p for p in date_files(raw, answer_date) if "answers" in p.relative_to(raw).parts[:1]]
    for crawl in crawl_dates_for(answer_date, window):
        files += layout.warc_files(raw, crawl)
    files += annotation_files(raw)
    book = codebook_file(raw, version)
    if book.is_file():
        files.append(book)
    return files
