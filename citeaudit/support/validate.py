"""Validation of the evidence locator against expert labels (ExpertQA, Malaviya et al. 2024).

ExpertQA gives, per claim, the evidence passages the expert saw and the expert's support label
(``Complete`` / ``Incomplete`` / ``Partial`` / ``Missing`` / ``N/A``). Each claim's evidence
passages, joined, stand in for the archived page; the claim goes through the same atomizer,
passage windows, BM25 and flags as ``support_evidence`` (``evidence.locate``). A claim-level
pair is *located* when every atom is ``evidence_located``; its score is the lowest atom score.

Questions are split by a stable hash (SHA-256 of the question text, even = calibration, odd =
held-out). The codebook's thresholds are frozen: the calibration half shows what it would set
(the threshold that passes 90% of the true Complete pairs) and the held-out half is reported:

- **Decorative citations**: each Complete claim paired with the evidence of another claim of
  the same answer (the next one with different evidence). Share of swapped pairs flagged
  (signal ``weak_evidence``, ``mismatch_flagged`` or ``no_evidence_in_page``), share of true
  pairs passed, AUC of the score true vs swapped, beside plain content-word coverage.
- **Expert labels**: among claims with evidence and a label other than N/A, balanced accuracy
  of Complete vs the rest and the AUC of the score, beside two baselines (everything located;
  evidence length alone, its cut set on the calibration half).

Every figure has a 95% percentile bootstrap interval over questions (the unit of the split;
2,000 replicates, fixed seed); differences are bootstrapped on the same replicates.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
from scipy.stats import rankdata

from citeaudit import duck
from citeaudit.codebook import Codebook
from citeaudit.support import evidence

FLAGGED = ("weak_evidence", "mismatch_flagged", "no_evidence_in_page")
_EVIDENCE = re.compile(r"^\s*\[\d+\]\s*\S+\s*", re.S)
REPLICATES = 2000
SEED = 20240601
PASS_TARGET = 0.90


def half(question: str) -> str:
    """``calibration`` or ``held_out`` by the parity of the question's SHA-256."""
    digest = hashlib.sha256(question.encode("utf-8")).digest()
    return "calibration" if digest[-1] % 2 == 0 else "held_out"


@dataclass
class Items:
    """Claim-level pairs of one ExpertQA file: the inputs of ``evidence.locate``."""

    pairs: pa.Table
    claims: pa.Table
    texts: pa.Table
    meta: dict[str, dict]  # citation_id -> kind, label, half, system, question, length


def load(path: Path) -> Items:
    """True pairs (claim + its own evidence) and swapped pairs of every Complete claim."""
    pairs, claims, texts, meta = [], [], {}, {}
    with open(path, encoding="utf-8") as fh:
        lines = [json.loads(line) for line in fh if line.strip()]
    for i, rec in enumerate(lines, start=1):
        q = rec["question"]
        side = half(q)
        field = (rec.get("metadata") or {}).get("field") or "unknown"
        for system, ans in sorted(rec["answers"].items()):
            pages = []
            for k, c in enumerate(ans["claims"]):
                claim_id = f"expertqa-{i:04d}-{system}:c{k:02d}"
                page = "\n".join(_EVIDENCE.sub("", e, count=1).strip()
                                 for e in c.get("evidence") or []).strip()
                pages.append((claim_id, page))
                claims.append({"claim_id": claim_id, "text": c["claim_string"]})
            for k, (claim_id, page) in enumerate(pages):
                label = ans["claims"][k].get("support")
                digest = hashlib.sha256(page.encode("utf-8")).hexdigest() if page else None
                if page:
                    texts[digest] = page
                base = {"answer_id": claim_id.rsplit(":", 1)[0], "claim_id": claim_id,
                        "url": None, "capture_time": None, "engine": system, "domain": field}
                pairs.append({**base, "citation_id": claim_id + ":own",
                              "payload_sha256": digest,
                              "unavailable_reason": None if page else "no_evidence_given"})
                meta[claim_id + ":own"] = {"kind": "true", "label": label, "half": side,
                                           "system": system, "question": q,
                                           "length": len(page)}
                if label != "Complete" or not page:
                    continue
                others = [p for p in pages[k + 1:] + pages[:k] if p[1] and p[1] != page]
                if not others:
                    continue
                other = hashlib.sha256(others[0][1].encode("utf-8")).hexdigest()
                pairs.append({**base, "citation_id": claim_id + ":swap",
                              "payload_sha256": other, "unavailable_reason": None})
                meta[claim_id + ":swap"] = {"kind": "swapped", "label": None, "half": side,
                                            "system": system, "question": q,
                                            "length": len(others[0][1])}
    schema = pa.schema([("answer_id", pa.string()), ("claim_id", pa.string()),
                        ("citation_id", pa.string()), ("url", pa.string()),
                        ("capture_time", pa.timestamp("us", tz="UTC")),
                        ("payload_sha256", pa.string()), ("unavailable_reason", pa.string()),
                        ("engine", pa.string()), ("domain", pa.string())])
    return Items(
        pa.Table.from_pylist(pairs, schema=schema),
        pa.Table.from_pylist(claims),
        pa.table({"payload_sha256": list(texts), "text": list(texts.values())}),
        meta,
    )


def claim_scores(items: Items, book: Codebook) -> list[dict]:
    """One row per pair: located, flagged, score (lowest atom), baseline coverage, meta."""
    rows = evidence.locate(items.pairs, items.claims, items.texts, book)
    con = duck.connect()
    con.register("rows", rows)
    agg = duck.query(con, "support/summarize_claim_evidence",
                     {"flagged": list(FLAGGED)}).to_pylist()
    out = []
    for r in agg:
        m = items.meta[r["citation_id"]]
        out.append({**m, **r})
    return out
