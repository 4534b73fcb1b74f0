"""Writing an import: answers JSONL, annotation CSV, annotator registry and codebook.

Everything is written sorted and without timestamps, so the same source file gives the same
bytes. A second import into the same folder adds its own files; the registry is merged and the
codebook is written only when absent or identical (a different file of the same version is an
error, never silently replaced).
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

import yaml

from citeaudit.imports.codebook import VERSION, import_codebook
from citeaudit.layout import CAVEATS_DIR
from citeaudit.support.judgments import COLUMNS, REGISTRY_FILE, SUPPORT_DIR


def short_id(*parts: str, n: int = 16) -> str:
    """A stable short id: the first ``n`` hex digits of SHA-256 over the parts."""
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:n]


def write_answers(out: Path, date: str, name: str, answers: Iterable[dict]) -> Path:
    """``answers/<date>/<name>.jsonl``, one answer per line in the given order."""
    path = out / "answers" / date / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for obj in answers:
            fh.write(json.dumps(obj, ensure_ascii=False, sort_keys=False) + "\n")
    return path


def write_annotations(out: Path, name: str, rows: Iterable[dict]) -> Path:
    """``annotations/support/<name>.csv`` with every column of the contract (and schema)."""
    path = out / SUPPORT_DIR / f"{name}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(COLUMNS), lineterminator="\n")
        w.writeheader()
        for row in rows:
            w.writerow({c: row.get(c, "") for c in COLUMNS})
    return path


def merge_registry(out: Path, annotators: dict[str, str]) -> Path:
    """Add annotators (id -> kind) to ``annotations/annotators.csv``; conflicting kinds fail."""
    path = out / REGISTRY_FILE
    known: dict[str, str] = {}
    if path.is_file():
        with path.open(encoding="utf-8", newline="") as fh:
            known = {r["annotator_id"]: r["kind"] for r in csv.DictReader(fh)}
    for aid, kind in annotators.items():
        if known.get(aid, kind) != kind:
            raise ValueError(f"{path}: annotator {aid} is registered as {known[aid]}, not {kind}")
        known[aid] = kind
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["annotator_id", "kind"])
        w.writerows(sorted(known.items()))
    return path


def write_codebook(out: Path) -> Path:
    """``codebooks/<VERSION>.yaml``: the import codebook (label maps of every import schema)."""
    path = out / "codebooks" / f"{VERSION}.yaml"
    text = ("# citeaudit import codebook (written by `citeaudit import`)\n"
            + yaml.safe_dump(import_codebook(), sort_keys=False, allow_unicode=True, width=96))
    if path.is_file() and path.read_text(encoding="utf-8") != text:
        raise FileExistsError(f"{path} exists with other content; refusing to replace it")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="\n")
    return path


def write_caveats(out: Path, dataset: str, source: str, dates: list[str],
                  caveats: list[str]) -> Path:
    """``import_caveats/<dataset>-<source stem>.json``: what a reader of this dataset's
    numbers must know (how it was selected, what it cannot say), for the observation dates it
    fills; the report shows them beside the numbers of those dates."""
    path = out / CAVEATS_DIR / f"{dataset}-{Path(source).stem}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"dataset": dataset, "source": Path(source).name, "dates": sorted(set(dates)),
           "caveats": caveats}
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8",
                    newline="\n")
    return path
