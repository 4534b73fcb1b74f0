"""Human and grader judgments of the demo corpus: support labels and source-risk tuples.

Support (the support rubric, docs/references.md#support-rubric): about 40% of the clean
citations of accepted answers are judged by two or three annotators under codebook ``v1``'s raw
labels, with real disagreement (about one item in six, some of them ties that adjudication must
leave unresolved) and, on some items, an LLM grader whose labels are noisier than the people's.
Every clean citation's planted truth (the latent support relation the labels are drawn from) is
written to ``ground_truth_support.csv`` (:func:`truth_rows`); the judge stand-in answers from it
and, once a review sample is drawn, the same annotators label the drawn pairs from it with the
same noise (:func:`sample_rows`).

Source risk (the source-risk audit specification, docs/references.md#source-risk-audit):
sampled (query, source, answer) tuples with predicates I, A, M, D each
0, 1 or JSON null, an evidence span for every resolved predicate (offsets into the answer text
or into the archived page text, see :mod:`citeaudit.demo_corpus.pages`), review dimensions in
[0, 1] and, for a few tuples, a later revision whose ``parent_record`` is the SHA-256 of the
canonical JSON of the line it replaces (:func:`record_digest`).
"""

from __future__ import annotations

import csv
import hashlib
import json
from datetime import datetime, timedelta
from pathlib import Path

from citeaudit.demo_corpus import crawl, pages
from citeaudit.demo_corpus.answers import AnswerDraft
from citeaudit.demo_corpus.world import World, rfc3339, rng_for, web_source

SUPPORT_COLUMNS = ("claim_id", "citation_id", "annotator_id", "label", "evidence_span",
                   "annotated_at", "codebook_version", "grader")
RAW_LABEL = {
    "supports": "supports",
    "partial": "partial",
    "no_support": "no_support",
    "contradicts": "contradicts",
    "unresolved": "cannot_tell",
}
ALL_LABELS = ("supports", "partial", "no_support", "contradicts", "cannot_tell")
CONFUSABLE = {
    "supports": ("partial",),
    "partial": ("supports", "no_support"),
    "no_support": ("partial", "cannot_tell"),
    "contradicts": ("partial", "no_support"),
    "cannot_tell": ("no_support",),
}
WITH_EVIDENCE = frozenset({"supports", "partial", "contradicts"})
ANNOTATORS = tuple(f"ann-{i:02d}" for i in range(1, 9))
GRADER = "gpt-judge-2026-10"
CODEBOOK = "v1"
P_SAMPLE = 0.40
P_CONTESTED = 0.17
P_GRADER = 0.30
P_THREE = 0.35

SR_ANNOTATORS = ("sr-ann-01", "sr-ann-02", "sr-ann-03", "sr-ann-04")
SR_ADJUDICATOR = "sr-adjudicator-01"
DISCLOSING_ROLES = frozenset({"affiliate", "first_party", "sponsored"})
DIMENSIONS = ("d_Q", "d_R", "d_H", "d_E")
D_Q_RANGE = {
    "consumer_products": (0.65, 0.95), "finance": (0.5, 0.85), "health": (0.4, 0.75),
    "technology": (0.3, 0.6), "legal": (0.3, 0.55), "news": (0.1, 0.4),
}
D_R_BASE = {"first_party": 0.95, "sponsored": 0.85, "affiliate": 0.75, "user_generated": 0.3,
            "independent": 0.1}
D_H_BASE = {"high": 0.8, "medium": 0.5, "low": 0.2}


SUPPORT_TRUTH = "ground_truth_support.csv"
TRUTH_COLUMNS = ("answer_id", "claim_id", "citation_id", "engine", "raw_label", "label")
V1_LABEL = {"supports": "fully_supported", "partial": "partially_supported",
            "no_support": "unsupported", "contradicts": "contradicted",
            "cannot_tell": "unresolved"}


def truth_rows(draft: AnswerDraft) -> list[list[str]]:
    """The planted truth of each clean citation of an accepted answer: its raw label (the
    ``demo_support`` schema people label in) and that label under codebook ``v1``."""
    rows = []
    claims = draft.obj["claims"]
    for k, cl in enumerate(draft.claims):
        for j, cd in enumerate(cl.citations):
            if cd.defect:
                continue
            raw = RAW_LABEL[cd.latent]
            rows.append([draft.obj["answer_id"], claims[k]["claim_id"],
                         claims[k]["citations"][j]["citation_id"], draft.engine, raw,
                         V1_LABEL[raw]])
    return rows


def read_truth(out: Path) -> dict[tuple[str, str], dict[str, str]]:
    """``ground_truth_support.csv`` of a demo raw folder: {(claim_id, citation_id): row}."""
    path = Path(out) / SUPPORT_TRUTH
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no planted support truth (generate the corpus with "
                                "citeaudit demo-corpus)")
    with path.open(encoding="utf-8", newline="") as fh:
        return {(r["claim_id"], r["citation_id"]): r for r in csv.DictReader(fh)}


def _noisy_labels(rng, gold: str) -> list[str]:
    """Two or three annotators' raw labels of an item whose truth is ``gold``: the same
    disagreement process as :func:`support_rows` (one item in six contested)."""
    n = 3 if rng.random() < P_THREE else 2
    labels = [gold] * n
    if rng.random() < P_CONTESTED:
        if n == 3 and rng.random() < 0.2:
            others = [lab for lab in ALL_LABELS if lab != gold]
            rng.shuffle(others)
            labels = [gold, others[0], others[1]]
            rng.shuffle(labels)
        else:
            labels[rng.randrange(n)] = rng.choice(CONFUSABLE[gold])
    return labels


def sample_rows(seed: int, drawn: list[dict], truth: dict[tuple[str, str], dict[str, str]],
                labelled: set[tuple[str, str]], annotated_at: str) -> list[list[str]]:
    """The demo's people label a drawn review sample: for each drawn pair nobody has labelled
    yet, two or three of the registered annotators judge it from its planted truth with the
    usual noise; a pair without planted truth is a citation with a planted defect (no URL, a
    malformed one, a hallucinated document): there is nothing to read, so people say
    ``cannot_tell``. Deterministic per pair."""
    rows: list[list[str]] = []
    for d in drawn:
        key = (d["claim_id"], d["citation_id"])
        if key in labelled:
            continue
        rng = rng_for(seed, "sample-labels", *key)
        labels = _noisy_labels(rng, truth[key]["raw_label"] if key in truth else "cannot_tell")
        for annotator, label in zip(rng.sample(ANNOTATORS, len(labels)), labels, strict=True):
            rows.append([key[0], key[1], annotator, label, "", annotated_at, CODEBOOK, "human"])
    return rows


def label_sample(out: Path, date: str, version: str, seed: int = 7) -> dict:
    """Write ``annotations/support/<date>_review_sample.csv``: the demo's annotators' labels of
    the drawn review sample of ``date`` × ``version`` (:func:`sample_rows`); pairs some human
    row of another file already labels are left as they are. Rewrites the file each time
    (same sample, same rows). Returns counts for the command's line."""
    from citeaudit.support import sample as sample_mod

    out = Path(out)
    drawn = sample_mod.read_optional(out, date, version)
    if drawn is None:
        raise FileNotFoundError(
            f"{sample_mod.sample_path(out, date, version)}: no review sample drawn for {date} "
            f"x codebook {version} (citeaudit sample --date {date} --codebook {version} --n N)")
    truth = read_truth(out)
    target = out / "annotations" / "support" / f"{date}_review_sample.csv"
    labelled: set[tuple[str, str]] = set()
    for path in sorted((out / "annotations" / "support").glob("*.csv")):
        if path == target:
            continue
        with path.open(encoding="utf-8", newline="") as fh:
            labelled.update((r.get("claim_id"), r.get("citation_id"))
                            for r in csv.DictReader(fh)
                            if r.get("grader") == "human" and r.get("label"))
    pairs = drawn.to_pylist()
    when = rfc3339(datetime.fromisoformat(date) + timedelta(days=2, hours=10))
    rows = sample_rows(seed, pairs, truth, labelled, when)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(SUPPORT_COLUMNS)
        w.writerows(rows)
    keys = [(p["claim_id"], p["citation_id"]) for p in pairs]
    return {"drawn": len(keys), "already": sum(k in labelled for k in keys),
            "labelled": len({(r[0], r[1]) for r in rows}), "rows": len(rows),
            "defective": sum(k not in labelled and k not in truth for k in keys),
            "file": str(target)}


def _when(rng, observed: datetime) -> str:
    return rfc3339(observed + timedelta(days=rng.randint(1, 3), seconds=rng.randint(0, 86399)))


def support_rows(rng, draft: AnswerDraft, observed: datetime) -> tuple[list[list[str]], int]:
    """Judgment rows for the sampled citations of one accepted answer.

    Returns ``(rows, items_with_disagreement)``, disagreement meaning the human raw labels of
    an item are not all equal (grader rows excluded).
    """
    rows: list[list[str]] = []
    disagreements = 0
    answer_claims = draft.obj["claims"]
    for k, cl in enumerate(draft.claims):
        for j, cd in enumerate(cl.citations):
            if cd.defect or rng.random() >= P_SAMPLE:
                continue
            gold = RAW_LABEL[cd.latent]
            labels = _noisy_labels(rng, gold)
            n = len(labels)
            if len(set(labels)) > 1:
                disagreements += 1
            claim_id = answer_claims[k]["claim_id"]
            citation_id = answer_claims[k]["citations"][j]["citation_id"]
            span = cd.quote_span
            for annotator, label in zip(rng.sample(ANNOTATORS, n), labels, strict=True):
                evidence = f"{span[0]}:{span[1]}" if span and label in WITH_EVIDENCE else ""
                rows.append([claim_id, citation_id, annotator, label, evidence,
                             _when(rng, observed), CODEBOOK, "human"])
            if rng.random() < P_GRADER:
                label = gold if rng.random() < 0.85 else rng.choice(CONFUSABLE[gold])
                evidence = f"{span[0]}:{span[1]}" if span and label in WITH_EVIDENCE else ""
                rows.append([claim_id, citation_id, GRADER, label, evidence,
                             _when(rng, observed), CODEBOOK, GRADER])
    return rows, disagreements


def canonical_json(obj: object) -> bytes:
    """Canonical serialisation for digests: sorted keys, no spaces, UTF-8."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def record_digest(record: dict) -> str:
    """SHA-256 (lower-case hex) of a source-risk line's canonical JSON."""
    return hashlib.sha256(canonical_json(record)).hexdigest()


def _ev(snapshot: str, text: str, span: tuple[int, int]) -> dict:
    return {"snapshot": snapshot, "start": span[0], "end": span[1],
            "quote": text[span[0]:span[1]]}


def source_risk_rows(world: World, rng, draft: AnswerDraft, observed: datetime
                     ) -> tuple[list[dict], list[dict]]:
    """Tuple judgments for sampled sources of one accepted web answer.

    Returns ``(records, revisions)``: revisions are written later in the same file and point
    to their parent by digest.
    """
    q = draft.query
    if draft.engine == "inhouse_rag" or not draft.claims:
        return [], []
    p_answer = 0.35 if q.domain in ("consumer_products", "finance", "health", "technology") \
        else 0.12
    if rng.random() >= p_answer:
        return [], []
    answer_text = draft.obj["answer_text"]
    c = draft.day + 1
    seen: set[int] = set()
    records: list[dict] = []
    revisions: list[dict] = []
    for k, cl in enumerate(draft.claims):
        for cd in cl.citations:
            if cd.kind != "web" or cd.defect or cd.index in seen:
                continue
            seen.add(cd.index)
            src = web_source(world, cd.index)
            p_pick = 0.6 if src.role in DISCLOSING_ROLES else 0.08
            if rng.random() >= p_pick or len(records) >= 2:
                continue
            page = pages.web_page_text(world, src, cd.version)
            claim_span = tuple(draft.obj["claims"][k]["span"])
            archived = src.plan != "never_captured" and crawl.archived_ok(world, src, c)
            preds: dict[str, int | None] = {}
            evidence: dict[str, dict] = {}
            # I: a relationship recoverable from the archived source
            if archived and page.relationship and rng.random() >= 0.08:
                preds["I"] = 1 if src.role in DISCLOSING_ROLES else 0
                evidence["I"] = _ev("source", page.text, page.relationship)
            else:
                preds["I"] = None
            # A: does the answer adopt the source's claim?
            if rng.random() >= 0.06:
                adopted = cd.latent in ("supports", "partial") or (
                    cd.latent == "unresolved" and rng.random() < 0.5)
                preds["A"] = 1 if adopted else 0
                evidence["A"] = _ev("answer", answer_text, claim_span)
            else:
                preds["A"] = None
            # M: does the relationship bear on how the adopted statement should be read?
            m_span = page.opinion if cl.metric < 0 else page.facts.get(cl.metric, (None,))[0]
            if archived and m_span and rng.random() >= 0.10:
                if src.role in ("affiliate", "sponsored"):
                    preds["M"] = 1 if rng.random() < 0.8 else 0
                elif src.role == "first_party":
                    preds["M"] = 1 if (cl.metric < 0 or rng.random() < 0.3) else 0
                else:
                    preds["M"] = 1 if rng.random() < 0.1 else 0
                evidence["M"] = _ev("source", page.text, m_span)
            else:
                preds["M"] = None
            # D: does the answer disclose the relationship where it uses the source?
            if rng.random() >= 0.04:
                disclosed = draft.disclosures.get(k) if cl.citations[0].index == src.g else None
                preds["D"] = 1 if disclosed else 0
                evidence["D"] = _ev("answer", answer_text, disclosed or claim_span)
            else:
                preds["D"] = None
            record = _record(rng, draft, src, k, preds, evidence, observed,
                             rng.choice(SR_ANNOTATORS), None)
            records.append(record)
            if None in preds.values() and rng.random() < 0.25:
                revised = dict(preds)
                rev_evidence = dict(evidence)
                if revised["A"] is None:
                    revised["A"] = 1
                    rev_evidence["A"] = _ev("answer", answer_text, claim_span)
                if revised["D"] is None:
                    revised["D"] = 0
                    rev_evidence["D"] = _ev("answer", answer_text, claim_span)
                if revised["M"] is None and archived and m_span:
                    revised["M"] = 1 if src.role in DISCLOSING_ROLES else 0
                    rev_evidence["M"] = _ev("source", page.text, m_span)
                if revised != preds:
                    revisions.append(_record(rng, draft, src, k, revised, rev_evidence,
                                             observed + timedelta(days=2), SR_ADJUDICATOR,
                                             record_digest(record)))
    return records, revisions


def _record(rng, draft: AnswerDraft, src, k: int, preds: dict, evidence: dict,
            observed: datetime, annotator: str, parent: str | None) -> dict:
    q = draft.query
    url = next(cd.obj["url"] for cd in draft.claims[k].citations if cd.index == src.g)
    lo, hi = D_Q_RANGE[q.domain]
    resolved = sum(v is not None for v in preds.values())
    dims = {
        "d_Q": round(rng.uniform(lo, hi), 3),
        "d_R": round(min(1.0, max(0.0, D_R_BASE[src.role] + rng.uniform(-0.08, 0.05))), 3),
        "d_H": round(min(1.0, max(0.0, D_H_BASE[q.risk_band] + rng.uniform(-0.1, 0.1))), 3),
        "d_E": round(resolved / 4, 3),
    }
    return {
        "query_id": q.query_id,
        "answer_id": draft.obj["answer_id"],
        "claim_id": draft.obj["claims"][k]["claim_id"],
        "source_url": url,
        "source_role": src.role,
        "codebook_version": CODEBOOK,
        "annotator_id": annotator,
        "annotated_at": _when(rng, observed),
        "predicates": {p: preds[p] for p in ("I", "A", "M", "D")},
        "evidence": {p: evidence[p] for p in ("I", "A", "M", "D") if p in evidence},
        "dimensions": dims,
        "parent_record": parent,
    }
