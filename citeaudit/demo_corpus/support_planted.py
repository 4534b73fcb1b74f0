"""Planted bad support annotations and the annotator registry of the demo corpus.

Real annotation exports carry mistakes: an annotator nobody registered, a label from another
rubric, a judgment entered twice, an id that matches nothing, a codebook version that was never
written, a grader row filed as human, a truncated line. This module writes one of each into
``annotations/support/<first date>_planted.csv`` (sorted after the day's own file, so the
original of a duplicated judgment is the one kept) and the registry
``annotations/annotators.csv``, and records each planted row in ground truth with the reason
the pipeline must give. Every planted row fails exactly one check.
"""

from __future__ import annotations

import csv
from pathlib import Path

from citeaudit.demo_corpus.annotations import ANNOTATORS, CODEBOOK, GRADER, SUPPORT_COLUMNS
from citeaudit.demo_corpus.world import rng_for

REGISTRY = Path("annotations") / "annotators.csv"


def write_registry(out: Path) -> Path:
    """``annotations/annotators.csv``: the demo's human annotators and its grader."""
    path = out / REGISTRY
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["annotator_id", "kind"])
        w.writerows([a, "human"] for a in ANNOTATORS)
        w.writerow([GRADER, "grader"])
    return path


def plant(out: Path, seed: int, first_date: str) -> list[dict]:
    """Write the registry and the planted rows; return their ground truth (file, line, reason).

    Nothing is planted when the first day has fewer than four judged human items.
    """
    write_registry(out)
    day_file = out / "annotations" / "support" / f"{first_date}.csv"
    with day_file.open(encoding="utf-8", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["grader"] == "human"]
    items: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        items.setdefault((r["claim_id"], r["citation_id"]), []).append(r)
    keys = sorted(items)
    if len(keys) < 4:
        return []
    rng = rng_for(seed, "support-planted")
    picks = rng.sample(keys, 4)

    def free_annotator(key: tuple[str, str]) -> str:
        used = {r["annotator_id"] for r in items[key]}
        return next(a for a in ANNOTATORS if a not in used)

    def row(key, annotator, label="supports", version=CODEBOOK, grader="human",
            when="2026-11-03T10:00:00Z") -> list[str]:
        return [key[0], key[1], annotator, label, "", when, version, grader]

    a, b, c, d = picks
    original = items[c][0]
    relabel = "no_support" if original["label"] != "no_support" else "supports"
    planted = [
        ("unknown_annotator", "annotator_id", row(a, "ann-99")),
        ("unknown_label", "label", row(b, free_annotator(b), label="mostly_supports")),
        ("duplicate_judgment", "annotator_id",
         row(c, original["annotator_id"], label=relabel)),
        ("orphan_claim", "claim_id", row(("clm-0000000000000000", d[1]), free_annotator(d))),
        ("orphan_citation", "citation_id",
         row((d[0], "cit-0000000000000000"), free_annotator(d))),
        ("unknown_codebook_version", "codebook_version", row(d, free_annotator(d),
                                                             version="v9")),
        ("grader_mismatch", "grader", row(a, free_annotator(a), grader=GRADER)),
        ("missing_field", "label", row(b, free_annotator(b), label="")),
        ("invalid_timestamp", "annotated_at", row(c, free_annotator(c), when="yesterday")),
    ]
    rel = f"annotations/support/{first_date}_planted.csv"
    truth = []
    with (out / rel).open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(SUPPORT_COLUMNS)
        for line, (reason, field, values) in enumerate(planted, start=2):
            w.writerow(values)
            truth.append({"file": rel, "line": line, "reason": reason, "field": field})
        # a record cut short by a broken export: too few fields
        fh.write(f"{a[0]},{a[1]},ann-01\n")
        truth.append({"file": rel, "line": len(planted) + 2, "reason": "wrong_column_count",
                      "field": None})
    return truth
