"""Planted source-risk defects of the demo corpus, with the outcome each one must produce.

After a day's tuple judgments and revisions, one malformed copy of a good record is appended per
defect type: the twelve of the source-risk specification's conformance suite (in raw annotation
lines: carried digests that do not
match, missing codebook or pipeline fields, "U" labels, inconsistent dimensions, missing or
invalid spans, mismatched quotes, unnormalized weights) and four the pipeline meets in the wild
(malformed JSON, an unknown answer, an orphan revision, an exact duplicate). Every planted line
is rejected, so the day's endpoints are those of the good records; ``expected_endpoints``
computes them independently of the pipeline (current record per tuple, R_O from predicates).
"""

from __future__ import annotations

import copy
import hashlib
import json

SEED_TYPES = (
    "identity_mismatch", "source_snapshot_checksum", "answer_snapshot_checksum",
    "record_checksum", "missing_codebook", "missing_pipeline_field", "invalid_nullable_label",
    "inconsistent_dimensions", "missing_span", "invalid_span", "mismatched_quote",
    "unnormalized_weights",
)
EXTRA_TYPES = ("malformed_json", "unknown_answer", "orphan_revision", "duplicate_record")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _resolved_answer_span(rec: dict) -> str | None:
    for p in ("A", "D", "I", "M"):
        ev = rec["evidence"].get(p)
        if ev and ev["snapshot"] == "answer" and rec["predicates"][p] is not None:
            return p
    return None


def plant(rng, records: list[dict], answer_texts: dict[str, str]) -> list[tuple[str, str]]:
    """Malformed lines for one day: ``[(defect_type, line_text), ...]`` in a fixed order.

    ``records`` are the day's good records (first annotations and revisions, as written);
    ``answer_texts`` maps their answer ids to the answer text.
    """
    firsts = [r for r in records if r["parent_record"] is None]
    usable = [r for r in firsts if _resolved_answer_span(r) is not None]
    if not usable:
        return []
    out: list[tuple[str, str]] = []
    for defect in SEED_TYPES + EXTRA_TYPES:
        base = rng.choice(usable)
        r = copy.deepcopy(base)
        r["annotator_id"] = "sr-ann-planted"  # never an exact copy of the good line
        p = _resolved_answer_span(r)
        ev = r["evidence"][p]
        if defect == "identity_mismatch":
            r["tuple_digest"] = _sha("a tuple digest from another query")
        elif defect == "source_snapshot_checksum":
            text = f"Archived copy of {r['source_url']} as the annotator saw it."
            r["source_snapshot"] = {"origin": "annotator_copy", "sha256": _sha(text),
                                    "text": text + " Edited after annotation."}
        elif defect == "answer_snapshot_checksum":
            r["answer_snapshot"] = {"origin": "annotator_copy",
                                    "sha256": _sha(answer_texts[r["answer_id"]] + " (v0)")}
        elif defect == "record_checksum":
            r["record_digest"] = _sha("a record digest of another record")
        elif defect == "missing_codebook":
            del r["codebook_version"]
        elif defect == "missing_pipeline_field":
            r["pipeline"] = {"name": "annotool", "version": "3"}
        elif defect == "invalid_nullable_label":
            r["predicates"][p] = "U"
        elif defect == "inconsistent_dimensions":
            del r["dimensions"]["d_Q"]
        elif defect == "missing_span":
            del r["evidence"][p]
        elif defect == "invalid_span":
            ev["end"] = len(answer_texts[r["answer_id"]]) + 5
        elif defect == "mismatched_quote":
            ev["quote"] = "Not what the answer says: " + ev["quote"][:20]
        elif defect == "unnormalized_weights":
            r["weights"] = {k: 0.5 for k in r["dimensions"]}
        elif defect == "unknown_answer":
            r["answer_id"] = r["answer_id"] + "-missing"
        elif defect == "orphan_revision":
            r["parent_record"] = _sha("a record that was never written")
        if defect == "malformed_json":
            line = json.dumps(r, ensure_ascii=False)[:-7]
        elif defect == "duplicate_record":
            line = json.dumps(base, ensure_ascii=False)
        else:
            line = json.dumps(r, ensure_ascii=False)
        out.append((defect, line))
    return out


def expected_endpoints(records: list[dict], digest) -> list[dict]:
    """Current record per (query, answer, source) and its R_O, from the good records alone.

    ``digest`` is the generator's digest of a record (what ``parent_record`` refers to).
    """
    parents = {r["parent_record"] for r in records if r["parent_record"]}
    out = []
    for r in records:
        if digest(r) in parents:
            continue
        preds = r["predicates"]
        values = tuple(preds[p] for p in ("I", "A", "M", "D"))
        r_o = None if None in values else int(values == (1, 1, 1, 0))
        out.append({"answer_id": r["answer_id"], "source_url": r["source_url"],
                    "annotator_id": r["annotator_id"], "r_o": r_o,
                    "I": values[0], "A": values[1], "M": values[2], "D": values[3],
                    "source_role": r["source_role"], "dimensions": r["dimensions"]})
    return sorted(out, key=lambda e: (e["answer_id"], e["source_url"]))


def ensure_revision(records: list[dict], digest) -> dict | None:
    """A revision for a day that has none, so every corpus exercises the ledger's lineage.

    An adjudicator re-examines the first tuple with an unresolved predicate (else the first
    tuple) and confirms the judgments: a new record of the same tuple pointing to its parent.
    """
    if not records or any(r["parent_record"] for r in records):
        return None
    base = next((r for r in records if None in r["predicates"].values()), records[0])
    rev = copy.deepcopy(base)
    rev["annotator_id"] = "sr-adjudicator-01"
    rev["annotated_at"] = base["annotated_at"][:11] + "23:59:59Z"
    rev["parent_record"] = digest(base)
    return rev
