"""Synthetic records of the complete state space {0, 1, U}^4 (the source-risk specification's
conformance suite) and sealing.

Each fixture carries a synthetic query, source and answer snapshot (texts), pipeline metadata,
a codebook version, weights, dimensions, passage support and an evidence span (with its quote)
for every resolved predicate. Sealing runs the pipeline's own validation to compute the digests,
so fixtures and the pipeline can never disagree about canonical form.
"""

from __future__ import annotations

import copy
import itertools
import json

import pyarrow as pa

from citeaudit.source_risk import contract, validate
from citeaudit.source_risk.digests import sha256_hex

U = "U"
STATES = tuple(itertools.product((0, 1, U), repeat=4))
WEIGHTS = {"d_Q": 0.25, "d_R": 0.25, "d_H": 0.25, "d_E": 0.25}
ROLES = ("affiliate",)
SETTINGS = validate.Settings(WEIGHTS, ROLES, "fixture")

SOURCE_TEXT = ("Acme Widget review. Disclosure: this site earns a commission from Acme on every "
               "sale. The Acme Widget is the best widget for home use. Battery life is 9 hours.")
ANSWER_BASE = "Question answered. The Acme Widget is the best widget for home use."
ANSWER_DISCLOSED = " Note: the cited review is paid by Acme."
SPANS = {
    "I": ("source", "Disclosure: this site earns a commission from Acme on every sale."),
    "A": ("answer", "The Acme Widget is the best widget for home use."),
    "M": ("source", "The Acme Widget is the best widget for home use."),
}


def state_label(state: tuple) -> str:
    return "".join(str(v) for v in state)


def _span(snapshot: str, text: str, quote: str) -> dict:
    start = text.index(quote)
    return {"snapshot": snapshot, "start": start, "end": start + len(quote), "quote": quote}


def fixture(state: tuple, *, support: int = 1, d_q: float = 0.5, drop_dq: bool = False) -> dict:
    """An unsealed record for one state (no digests yet)."""
    label = state_label(state)
    answer = ANSWER_BASE + (ANSWER_DISCLOSED if state[3] == 1 else "")
    evidence = {}
    for pred, value in zip(contract.PREDICATES, state, strict=True):
        if value == U:
            continue
        if pred == "D":
            quote = ANSWER_DISCLOSED.strip() if value == 1 else SPANS["A"][1]
            evidence[pred] = _span("answer", answer, quote)
        else:
            snap, quote = SPANS[pred]
            evidence[pred] = _span(snap, SOURCE_TEXT if snap == "source" else answer, quote)
    dims = {"d_Q": d_q, "d_R": 0.8, "d_H": 0.4, "d_E": round(sum(v != U for v in state) / 4, 3)}
    weights = dict(WEIGHTS)
    if drop_dq:
        dims.pop("d_Q")
        weights = {"d_R": 1 / 3, "d_H": 1 / 3, "d_E": 1 / 3}
    return {
        "query_id": f"conf-q-{label}",
        "query_sha256": sha256_hex(f"conformance query for state {label}"),
        "answer_id": f"conf-a-{label}",
        "claim_id": f"conf-c-{label}",
        "source_url": f"https://reviews.example/acme-widget?state={label}",
        "canonical_url": f"https://reviews.example/acme-widget?state={label}",
        "rank": 1,
        "collected_at": "2026-01-01T00:00:00Z",
        "source_role": "affiliate",
        "codebook_version": "conformance",
        "annotator_id": "fixture-annotator",
        "annotated_at": "2026-01-02T00:00:00Z",
        "pipeline": {"name": contract.PIPELINE_NAME, "version": contract.CONTRACT_VERSION,
                     "config": sha256_hex("conformance-fixtures")},
        "source_snapshot": {"origin": "fixture", "text": SOURCE_TEXT},
        "answer_snapshot": {"origin": "fixture", "text": answer},
        "predicates": {p: (None if v == U else v)
                       for p, v in zip(contract.PREDICATES, state, strict=True)},
        "evidence": evidence,
        "dimensions": dims,
        "weights": weights,
        "support": support,
        "parent_record": None,
    }


def lines_table(records: list[dict], name: str) -> pa.Table:
    """Records as JSONL lines (file, line, raw) for :func:`validate.validate`."""
    return pa.table({"file": [name] * len(records),
                     "line": pa.array(range(1, len(records) + 1), pa.int64()),
                     "raw": [json.dumps(r, ensure_ascii=False) for r in records]},
                    schema=validate.LINES_SCHEMA)


def run(records: list[dict], name: str = "batch.jsonl") -> validate.Validated:
    """Validate records exactly as the pipeline validates annotation lines."""
    return validate.validate(lines_table(records, name), SETTINGS)


def seal(records: list[dict]) -> list[dict]:
    """Copies of ``records`` with snapshot, tuple and record digests as the pipeline computes.

    Digests already present are dropped first, so a mutated record is resealed over its new
    content; deliberate checksum and identity defects are simply not resealed.
    """
    bare = []
    for rec in records:
        r = copy.deepcopy(rec)
        r.pop("tuple_digest", None)
        r.pop("record_digest", None)
        for snap in ("source_snapshot", "answer_snapshot"):
            if isinstance(r.get(snap), dict) and "text" in r[snap]:
                r[snap].pop("sha256", None)
        bare.append(r)
    result = run(bare, "seal.jsonl")
    digests = result.digests.to_pylist()
    out = []
    for r, d in zip(bare, digests, strict=True):
        for snap in ("source_snapshot", "answer_snapshot"):
            if isinstance(r.get(snap), dict) and isinstance(r[snap].get("text"), str):
                r[snap]["sha256"] = sha256_hex(r[snap]["text"])
        r["tuple_digest"] = d["tuple_digest"]
        out.append(r)
    # the record digest covers the stored tuple digest and snapshot digests: seal again
    digests = run(out, "seal.jsonl").digests.to_pylist()
    for r, d in zip(out, digests, strict=True):
        r["record_digest"] = d["record_digest"]
    return out
