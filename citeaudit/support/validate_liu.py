"""Validation of a grader against Liu, Zhang & Liang (2023) (``intrinsic_halls.json``).

Liu et al.'s annotators label each (statement, citation) of an answer and, only where the
citation supports the statement (``Complete`` or ``Partial Support``), quote the ``evidence``
sentence they found on the page. The file holds no page text. So a grader can be put to work
here only on the pairs that carry evidence, with that sentence standing in for the page, and
only on questions the evidence can answer:

- **Decorative citations** (the same test as ExpertQA's, :func:`validate.decorative`): each
  Complete statement paired with the evidence of another statement of the same answer. Share
  of swapped pairs flagged, of true pairs passed, AUC of the score (true vs swapped), beside
  plain content-word coverage. The cuts that pass 90% of true Complete pairs are learned on the
  calibration half (SHA-256 of the query, as ExpertQA's) and reported on the held-out half.
  The grader's own *labels* (swapped not ``fully_supported`` = flagged) need no cut learned
  here, so they are reported on every answer (the ``llm`` grader is validated this way).
- **Complete vs Partial** among the pairs with evidence: the grader's label against the
  annotators' (Complete → ``fully_supported``, Partial → ``partially_supported``): balanced
  accuracy of ``fully_supported`` vs the rest, Cohen's κ and the confusion matrix
  (:func:`validate.label_agreement`), overall and per engine (``system_name``); and the
  locator's Complete-vs-rest figures beside the evidence-length baseline
  (:func:`validate.expert`, the length cut learned on the calibration half).
- **What cannot be graded** from the file, counted by label with the reason: every pair
  without evidence (No Support, "supports but also refutes", Inaccessible, Unclear, and the
  few Complete ones whose evidence is empty) has no passage. Never silently dropped.

Limits, printed with the figures: the stand-in page is the one sentence the annotator chose
as support, the easiest possible page (true pairs pass more often than on a whole page); the
unsupported and contradicting pairs, where a grader's errors cost most, are exactly the ones
that cannot be graded; the file is a biased subset (every answer was chosen for holding a
"supports but also refutes" citation), so no rate here is a rate of the engines.

Intervals: 95% percentile bootstrap over queries (2,000 replicates, fixed seed; a query is
one answer, or the two or three engines' answers to it), the split's unit.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa

from citeaudit.codebook import Codebook
from citeaudit.support import evidence, validate

COMPLETE = "Citation Completely Supports Statement"
PARTIAL = "Citation Partially Supports Statement"
REFUTES = "Citation Completely Supports but Also Refutes Statement"
HUMAN = {COMPLETE: "fully_supported", PARTIAL: "partially_supported"}
SHORT = {COMPLETE: "Complete", PARTIAL: "Partial"}  # the labels validate.expert reads
NO_PASSAGE = "no_passage"
BIAS_NOTE = ("Liu et al.'s intrinsic_halls.json is a biased subset of their evaluation: answers "
             "chosen because at least one citation 'completely supports but also refutes' its "
             "statement. Good for checking a grader's behaviour, not for the engines' rates.")
LIMITS = ("The page is the evidence sentence the annotator quoted (no page text is "
          "released): the easiest page a true pair can have. Only supporting pairs carry "
          "evidence, so unsupported and contradicting pairs cannot be graded here: this "
          "validates separating decorative from true citations and complete from partial "
          "support, not finding unsupported or contradicted claims.")


def load(path: Path) -> tuple[validate.Items, list[dict]]:
    """(pairs for ``evidence.locate`` with their meta, one row per (statement, citation)
    judgment with its label and whether it can be graded, and why not).

    True pairs: every judgment with evidence and a Complete or Partial label, the evidence
    as the page. Swapped pairs: each true Complete statement with the evidence of the next
    pair of another statement of its answer (in the file's order, wrapping) whose evidence
    differs from its own."""
    with open(path, encoding="utf-8") as fh:
        records = json.load(fh)
    pairs, claims, texts, meta, judged = [], [], {}, {}, []
    for rec in records:
        answer_id = f"liu-{rec['id']}"
        side = validate.half(rec["query"])
        system = rec["system_name"]
        notes = rec["annotation"]["statement_to_annotation"]
        pages: list[tuple[str, str, str, str]] = []  # claim_id, citation_id, label, evidence
        for k, (statement, note) in enumerate(notes.items()):
            claim_id = f"{answer_id}:s{k:02d}"
            claims.append({"claim_id": claim_id, "text": statement})
            for j, ann in enumerate((note or {}).get("citation_annotations") or []):
                label = ann.get("citation_supports") or "(no label)"
                page = (ann.get("evidence") or "").strip()
                gradeable = bool(page) and label in HUMAN
                judged.append({"answer_id": answer_id, "label": label, "system": system,
                               "gradeable": gradeable,
                               "reason": None if gradeable else NO_PASSAGE})
                if gradeable:
                    pages.append((claim_id, f"{claim_id}:c{j:02d}", label, page))
        base = {"answer_id": answer_id, "url": None, "capture_time": None, "engine": system,
                "domain": rec.get("split") or "unknown"}
        common = {"half": side, "system": system, "question": rec["query"]}
        for k, (claim_id, citation_id, label, page) in enumerate(pages):
            digest = hashlib.sha256(page.encode("utf-8")).hexdigest()
            texts[digest] = page
            pairs.append({**base, "claim_id": claim_id, "citation_id": citation_id + ":own",
                          "payload_sha256": digest, "unavailable_reason": None})
            meta[citation_id + ":own"] = {**common, "kind": "true", "label": SHORT[label],
                                          "length": len(page)}
            if label != COMPLETE:
                continue
            others = [p for p in pages[k + 1:] + pages[:k] if p[0] != claim_id and p[3] != page]
            if not others:
                continue
            other = hashlib.sha256(others[0][3].encode("utf-8")).hexdigest()
            pairs.append({**base, "claim_id": claim_id, "citation_id": citation_id + ":swap",
                          "payload_sha256": other, "unavailable_reason": None})
            meta[citation_id + ":swap"] = {**common, "kind": "swapped", "label": None,
                                           "length": len(others[0][3])}
    schema = pa.schema([("answer_id", pa.string()), ("claim_id", pa.string()),
                        ("citation_id", pa.string()), ("url", pa.string()),
                        ("capture_time", pa.timestamp("us", tz="UTC")),
                        ("payload_sha256", pa.string()), ("unavailable_reason", pa.string()),
                        ("engine", pa.string()), ("domain", pa.string())])
    items = validate.Items(pa.Table.from_pylist(pairs, schema=schema),
                           pa.Table.from_pylist(claims),
                           pa.table({"payload_sha256": list(texts),
                                     "text": list(texts.values())}), meta)
    return items, judged


def ungradeable_counts(judged: list[dict]) -> dict[str, dict[str, int]]:
    """{label: {"judged", "gradeable", reason: count}}: every judgment accounted for."""
    out: dict[str, dict[str, int]] = {}
    for r in judged:
        c = out.setdefault(r["label"], {"judged": 0, "gradeable": 0})
        c["judged"] += 1
        key = "gradeable" if r["gradeable"] else r["reason"]
        c[key] = c.get(key, 0) + 1
    return dict(sorted(out.items()))


def _label_decorative(rows: list[dict]) -> dict[str, tuple]:
    """The grader's labels on the decorative test: share of swapped pairs labelled partially
    supported, unsupported or contradicted (flagged), of true Complete pairs labelled
    ``fully_supported`` (passed), and of either left ``unresolved`` (the grader could not say:
    neither a flag nor a pass, counted on its own)."""
    cols = {k: np.array([r[k] for r in rows], dtype=object) for k in ("kind", "grader")}
    samples = validate._replicates(rows, cols)

    def share(kind: str, wanted: Callable[[str], bool]) -> tuple[float, float, float]:
        def f(c: validate.Columns) -> float:
            v = [wanted(g) for g in c["grader"][c["kind"] == kind]]
            return float(np.mean(v)) if v else float("nan")
        return validate._boot(cols, samples, f)

    return {
        "n_true": (sum(r["kind"] == "true" for r in rows),),
        "n_swapped": (sum(r["kind"] == "swapped" for r in rows),),
        "swapped_flagged": share("swapped", lambda g: g not in ("fully_supported", "unresolved")),
        "true_passed": share("true", lambda g: g == "fully_supported"),
        "swapped_unresolved": share("swapped", lambda g: g == "unresolved"),
        "true_unresolved": share("true", lambda g: g == "unresolved"),
    }


def report(path: Path, book: Codebook, grader: str = "locator",
           environ: dict[str, str] | None = None) -> dict:
    """Every figure of the module's validation for one Liu et al. file and one grader."""
    items, judged = load(path)
    located = evidence.locate(items.pairs, items.claims, items.texts, book)
    rows = validate.claim_scores(items, book, located)
    cal = [r for r in rows if r["half"] == "calibration"]
    held = [r for r in rows if r["half"] == "held_out"]
    true_cal = [r for r in cal if r["kind"] == "true" and r["label"] == "Complete"]
    cuts = {"score_cut_for_90pct_pass": validate.pass_threshold(
                validate._col(true_cal, "score")),
            "baseline_coverage_cut": validate.pass_threshold(
                validate._col(true_cal, "plain_coverage")),
            "grader_cut_for_90pct_pass": validate.pass_threshold(
                validate._col(true_cal, "grader_score"))}
    exp_cal = [r for r in cal if r["kind"] == "true"]
    truth = np.array([r["label"] == "Complete" for r in exp_cal])
    lengths = sorted({r["length"] for r in exp_cal})
    cuts["length_cut"] = max(lengths, key=lambda c: validate.balanced_accuracy(
        truth, np.array([r["length"] >= c for r in exp_cal]))) if lengths else float("nan")
    systems = sorted({r["system"] for r in rows})

    def by_system(fn, group: list[dict], *args: object) -> dict[str, dict]:
        return {"overall": fn(group, *args),
                **{s: fn([r for r in group if r["system"] == s], *args) for s in systems}}

    dec = [r for r in held if r["kind"] == "swapped" or r["label"] == "Complete"]
    exp = [r for r in held if r["kind"] == "true"]
    labels = validate.grader_labels(items, located, book, grader, environ)
    graded = [{**r, "grader": labels[r["citation_id"]]} for r in rows
              if r["citation_id"] in labels]
    missing = len(rows) - len(graded)
    dec_all = [r for r in graded if r["kind"] == "swapped" or r["label"] == "Complete"]
    agree = [{"human": "fully_supported" if r["label"] == "Complete"
              else "partially_supported", "grader": r["grader"],
              "question": r["question"], "system": r["system"], "half": r["half"]}
             for r in graded if r["kind"] == "true"]
    agreement = {"overall": validate.label_agreement(agree),
                 "held-out half": validate.label_agreement(
                     [a for a in agree if a["half"] == "held_out"], confusion=False),
                 **{s: validate.label_agreement([a for a in agree if a["system"] == s],
                                                confusion=False) for s in systems}}
    with open(path, encoding="utf-8") as fh:
        records = json.load(fh)
    refuting = {r["answer_id"] for r in judged if r["label"] == REFUTES}
    return {
        "file": str(path), "codebook": book.version, "label_grader": grader,
        "grader": f"{evidence.GRADER} {evidence.GRADER_VERSION}+{book.atomization.version}",
        "answers": len(records), "answers_with_refuting_citation": len(refuting),
        "judgments": len(judged), "gradeable": sum(r["gradeable"] for r in judged),
        "not_gradeable": ungradeable_counts(judged),
        "pairs": {"true": sum(r["kind"] == "true" for r in rows),
                  "swapped": sum(r["kind"] == "swapped" for r in rows),
                  "without_grader_label": missing},
        "questions": {"calibration": len({r["question"] for r in cal}),
                      "held_out": len({r["question"] for r in held})},
        "thresholds": cuts,
        "decorative": by_system(validate.decorative, dec, cuts["baseline_coverage_cut"],
                                cuts["grader_cut_for_90pct_pass"]),
        "decorative_labels": by_system(_label_decorative, dec_all),
        "expert": by_system(validate.expert, exp, cuts["length_cut"]),
        "labels": agreement,
        "bias_note": BIAS_NOTE, "limits": LIMITS,
    }
