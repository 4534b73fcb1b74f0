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
- The ``locator`` grader (``grader_judgments``): its score (plain coverage + the atoms' mean
  best-passage coverage × a weight − the share of atoms with a hard mismatch × a penalty; the
  codebook's ``graders`` section, whose defaults were chosen on the calibration half) with
  the cut that passes 90% of the calibration half's true Complete pairs: the share of swapped
  pairs it flags and of true ones it passes on the held-out half, and its AUC.
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
import pyarrow.compute as pc

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


def claim_scores(items: Items, book: Codebook, rows: pa.Table | None = None) -> list[dict]:
    """One row per pair: located, flagged, score (lowest atom), baseline coverage, meta
    (``rows``: the pairs' ``evidence.locate`` rows, when already computed)."""
    if rows is None:
        rows = evidence.locate(items.pairs, items.claims, items.texts, book)
    con = duck.connect()
    con.register("rows", rows)
    agg = duck.query(con, "support/summarize_claim_evidence",
                     {"flagged": list(FLAGGED)}).to_pylist()
    g = book.graders
    out = []
    for r in agg:
        m = items.meta[r["citation_id"]]
        # the locator grader's score (sql/support/select_locator_judgments.sql)
        grader_score = ((r["plain_coverage"] or 0) + g.locator_coverage_weight *
                        (r["mean_coverage"] or 0) - g.locator_mismatch_penalty *
                        (r["mismatch_share"] or 0))
        out.append({**m, **r, "grader_score": grader_score})
    return out


def auc(positive: np.ndarray, negative: np.ndarray) -> float:
    """Mann-Whitney AUC: P(score of a positive > a negative), ties counted one half."""
    if len(positive) == 0 or len(negative) == 0:
        return float("nan")
    if len(positive) * len(negative) <= 1_000_000:  # direct count: far faster than ranking
        p, q = np.asarray(positive)[:, None], np.asarray(negative)[None, :]
        # U = wins + ties / 2 is exact, as the rank sum's: the same bytes as the ranking path
        return float((np.count_nonzero(p > q) + 0.5 * np.count_nonzero(p == q))
                     / (len(positive) * len(negative)))
    # imported at the call: Dagster's UI, daemon and code server load this module and never
    # need it
    from scipy.stats import rankdata
    ranks = rankdata(np.concatenate([positive, negative]))
    n1 = len(positive)
    return float((ranks[:n1].sum() - n1 * (n1 + 1) / 2) / (n1 * len(negative)))


def balanced_accuracy(truth: np.ndarray, predicted: np.ndarray) -> float:
    """Mean of the recall of the positives and the recall of the negatives."""
    if truth.all() or not truth.any():
        return float("nan")
    return float((predicted[truth].mean() + (~predicted[~truth]).mean()) / 2)


def pass_threshold(scores: np.ndarray, target: float = PASS_TARGET) -> float:
    """The highest cut t with at least ``target`` of ``scores`` at or above it."""
    s = np.sort(scores)
    return float(s[int(np.floor((1 - target) * len(s)))]) if len(s) else float("nan")


Columns = dict[str, np.ndarray]


def _columns(rows: list[dict], floats: tuple[str, ...], others: tuple[str, ...]) -> Columns:
    """The rows as one array per key (``floats`` as float, ``None`` as NaN), so a bootstrap
    replicate is an index array taken from each column instead of a list of rows."""
    cols = {k: np.array([r[k] for r in rows], dtype=float) for k in floats}
    cols.update({k: np.array([r[k] for r in rows]) for k in others})
    return cols


def _replicates(rows: list[dict], cols: Columns, replicates: int | None = None
                ) -> list[Columns]:
    """The bootstrap replicates over questions (``replicates``: default ``REPLICATES``, read
    at the call): each draws the questions with replacement and takes their rows, in the order
    drawn, from every column. Every figure of one group is computed on the same replicates."""
    replicates = REPLICATES if replicates is None else replicates
    questions = sorted({r["question"] for r in rows})
    index: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        index.setdefault(r["question"], []).append(i)
    members = [np.array(index[q], dtype=np.intp) for q in questions]
    rng = np.random.default_rng(SEED)
    out = []
    for _ in range(replicates):
        picks = rng.integers(0, len(questions), len(questions))
        take = (np.concatenate([members[q] for q in picks]) if len(picks)
                else np.zeros(0, np.intp))
        out.append({k: v[take] for k, v in cols.items()})
    return out


def _boot(cols: Columns, samples: list[Columns], stat) -> tuple[float, float, float]:
    """(estimate, low, high): ``stat`` of the columns and its 95% percentile interval over
    the bootstrap ``samples``."""
    point = stat(cols)
    values = np.array([stat(sample) for sample in samples], dtype=float)
    values = values[~np.isnan(values)]
    if len(values) == 0 or np.isnan(point):
        return point, float("nan"), float("nan")
    return point, float(np.quantile(values, 0.025)), float(np.quantile(values, 0.975))


def _col(rows: list[dict], key: str, kind: str | None = None) -> np.ndarray:
    return np.array([r[key] for r in rows if kind is None or r["kind"] == kind], dtype=float)


def _mean(values: np.ndarray) -> float:
    return float(np.mean(values)) if len(values) else float("nan")


def decorative(rows: list[dict], baseline_cut: float, grader_cut: float = float("nan")
               ) -> dict[str, tuple]:
    """Held-out decorative-citation figures for one group of (true Complete + swapped) rows."""
    cols = _columns(rows, ("plain_coverage", "score", "grader_score"), ("kind", "flagged"))

    def of(c: Columns, key: str, kind: str) -> np.ndarray:
        return c[key][c["kind"] == kind]

    def auc_of(key):
        return lambda c: auc(of(c, key, "true"), of(c, key, "swapped"))

    samples = _replicates(rows, cols)

    def boot(stat):
        return _boot(cols, samples, stat)

    return {
        "grader_swapped_flagged": boot(
            lambda c: _mean(of(c, "grader_score", "swapped") < grader_cut)),
        "grader_true_passed": boot(lambda c: _mean(of(c, "grader_score", "true") >= grader_cut)),
        "auc_grader": boot(auc_of("grader_score")),
        "swapped_flagged": boot(lambda c: _mean(of(c, "flagged", "swapped").astype(bool))),
        "true_passed": boot(lambda c: _mean(~of(c, "flagged", "true").astype(bool))),
        "auc_locator": boot(auc_of("score")),
        "auc_coverage": boot(auc_of("plain_coverage")),
        "baseline_swapped_flagged": boot(
            lambda c: _mean(of(c, "plain_coverage", "swapped") < baseline_cut)),
        "n_true": (sum(r["kind"] == "true" for r in rows),),
        "n_swapped": (sum(r["kind"] == "swapped" for r in rows),),
    }


def expert(rows: list[dict], length_cut: float) -> dict[str, tuple]:
    """Held-out Complete-vs-rest figures for one group of true pairs with evidence."""
    cols = _columns(rows, ("score", "plain_coverage", "length"), ("located",))
    cols["complete"] = np.array([r["label"] == "Complete" for r in rows], dtype=bool)

    def ba(pred):
        return lambda c: balanced_accuracy(c["complete"], pred(c))

    def auc_of(key):
        return lambda c: auc(c[key][c["complete"]], c[key][~c["complete"]])

    samples = _replicates(rows, cols)

    def boot(stat):
        return _boot(cols, samples, stat)

    return {
        "ba_locator": boot(ba(lambda c: c["located"].astype(bool))),
        "ba_all_located": boot(ba(lambda c: np.ones(len(c["complete"]), bool))),
        "ba_length": boot(ba(lambda c: c["length"] >= length_cut)),
        "auc_locator": boot(auc_of("score")),
        "auc_coverage": boot(auc_of("plain_coverage")),
        "auc_length": boot(auc_of("length")),
        "auc_locator_minus_length": boot(lambda c: auc_of("score")(c) - auc_of("length")(c)),
        "n": (len(rows),),
        "n_complete": (int(cols["complete"].sum()),),
    }


EXPERT_LABELS = {"Complete": "fully_supported", "Partial": "partially_supported",
                 "Incomplete": "partially_supported", "Missing": "unsupported"}


def kappa(human: np.ndarray, grader: np.ndarray) -> float:
    """Cohen's kappa of two label arrays (nominal; NaN when chance agreement is 1)."""
    labels = sorted(set(human.tolist()) | set(grader.tolist()))
    if not labels:
        return float("nan")
    p_o = float(np.mean(human == grader))
    p_e = sum(float(np.mean(human == x)) * float(np.mean(grader == x)) for x in labels)
    return float("nan") if p_e >= 1 else (p_o - p_e) / (1 - p_e)


def label_agreement(rows: list[dict], confusion: bool = True,
                    replicates: int | None = None) -> dict[str, tuple]:
    """A grader's labels against people's: balanced accuracy of fully_supported vs the rest,
    Cohen's kappa over the labels, and the confusion matrix (each cell: the share of the
    human label's row), each with a 95% percentile bootstrap interval over ``question`` (the
    cluster; fixed seed). ``rows`` have ``human``, ``grader`` and ``question``; ``confusion``
    False leaves the matrix out."""
    human = np.array([r["human"] for r in rows], dtype=object)
    grader = np.array([r["grader"] for r in rows], dtype=object)
    clusters = sorted({r["question"] for r in rows})
    members = [np.array([i for i, r in enumerate(rows) if r["question"] == q], dtype=np.intp)
               for q in clusters]
    cells = sorted({(h, g) for h, g in zip(human, grader, strict=True)}) if confusion else []
    replicates = REPLICATES if replicates is None else replicates

    def stats(idx: np.ndarray) -> list[float]:
        h, g = human[idx], grader[idx]
        out = [balanced_accuracy(h == "fully_supported", g == "fully_supported"), kappa(h, g)]
        for ch, cg in cells:
            row = h == ch
            out.append(float(np.mean(g[row] == cg)) if row.any() else float("nan"))
        return out

    point = stats(np.arange(len(rows), dtype=np.intp))
    rng = np.random.default_rng(SEED)
    draws = []
    for _ in range(replicates if clusters else 0):
        picks = rng.integers(0, len(clusters), len(clusters))
        draws.append(stats(np.concatenate([members[k] for k in picks])))
    values = np.array(draws, dtype=float).reshape(len(draws), len(point))

    def interval(j: int) -> tuple[float, float, float]:
        v = values[:, j][~np.isnan(values[:, j])]
        if np.isnan(point[j]) or len(v) == 0:
            return point[j], float("nan"), float("nan")
        return point[j], float(np.quantile(v, 0.025)), float(np.quantile(v, 0.975))

    out: dict[str, tuple] = {"n": (len(rows),), "balanced_accuracy": interval(0),
                             "cohen_kappa": interval(1)}
    for j, (ch, cg) in enumerate(cells, start=2):
        count = int(np.sum((human == ch) & (grader == cg)))
        out[f"human={ch} grader={cg} (n={count})"] = interval(j)
    return out


def grader_labels(items: Items, rows: pa.Table, book: Codebook, grader: str = "locator",
                  environ: dict[str, str] | None = None) -> dict[str, str]:
    """{citation_id: label} of a built-in grader on the file's pairs, through the same
    ``grader_judgments`` code as a run (``llm``: the judge configured in the environment)."""
    from citeaudit.support import graders as graders_mod
    from citeaudit.support import judge

    if grader == "locator":
        chosen = graders_mod.LocatorGrader(book)
    else:
        settings = judge.settings_from_env(environ)
        if settings is None:
            raise judge.JudgeConfigError("the llm grader is off: set CITEAUDIT_JUDGE_BASE_URL "
                                         "and CITEAUDIT_JUDGE_MODEL")
        chosen = judge.LLMGrader(book, settings)
    table = chosen.grade(graders_mod.items(rows, items.claims))
    return dict(zip(table.column("citation_id").to_pylist(),
                    table.column("verdict").to_pylist(), strict=True))


def report(path: Path, book: Codebook, grader: str = "locator",
           environ: dict[str, str] | None = None) -> dict:
    """Calibration settings and held-out tables (overall and per system) for one file, and
    the chosen grader's labels against the experts' on the held-out half."""
    items = load(path)
    located = evidence.locate(items.pairs, items.claims, items.texts, book)
    rows = claim_scores(items, book, located)
    cal = [r for r in rows if r["half"] == "calibration"]
    dec_cal = [r for r in cal if r["kind"] == "true" and r["label"] == "Complete"
               and not r["unavailable"]]
    cal_cut = pass_threshold(_col(dec_cal, "score"))
    base_cut = pass_threshold(_col(dec_cal, "plain_coverage"))
    grader_cut = pass_threshold(_col(dec_cal, "grader_score"))
    exp_cal = [r for r in cal if r["kind"] == "true" and not r["unavailable"]
               and r["label"] not in (None, "N/A")]
    lengths = sorted({r["length"] for r in exp_cal})
    length_cut = max(lengths, key=lambda c: balanced_accuracy(
        np.array([r["label"] == "Complete" for r in exp_cal]),
        np.array([r["length"] >= c for r in exp_cal]))) if lengths else float("nan")
    held = [r for r in rows if r["half"] == "held_out"]
    dec = [r for r in held if not r["unavailable"] and (
        r["kind"] == "swapped" or r["label"] == "Complete")]
    exp = [r for r in held if r["kind"] == "true" and not r["unavailable"]
           and r["label"] not in (None, "N/A")]
    systems = sorted({r["system"] for r in held if not r["unavailable"]})
    return {
        "file": str(path),
        "codebook": book.version,
        "grader": f"{evidence.GRADER} {evidence.GRADER_VERSION}+{book.atomization.version}",
        "thresholds": {"located_coverage": book.evidence.located_coverage,
                       "no_evidence_coverage": book.evidence.no_evidence_coverage,
                       "calibration_score_cut_for_90pct_pass": cal_cut,
                       "baseline_coverage_cut": base_cut, "length_cut": length_cut,
                       "grader_cut_for_90pct_pass": grader_cut},
        "questions": {"calibration": len({r["question"] for r in cal}),
                      "held_out": len({r["question"] for r in held})},
        "decorative": {"overall": decorative(dec, base_cut, grader_cut),
                       **{s: decorative([r for r in dec if r["system"] == s], base_cut,
                                        grader_cut)
                          for s in systems}},
        "expert": {"overall": expert(exp, length_cut),
                   **{s: expert([r for r in exp if r["system"] == s], length_cut)
                      for s in systems}},
        "labels": _expert_agreement(items, located, book, grader, held, systems, environ),
        "label_grader": grader,
    }


def _expert_agreement(items: Items, located: pa.Table, book: Codebook, grader: str,
                      held: list[dict], systems: list[str],
                      environ: dict[str, str] | None) -> dict[str, dict]:
    """The grader's labels vs the experts' (Complete → fully_supported, Partial and
    Incomplete → partially_supported, Missing → unsupported) on the held-out true pairs."""
    keep = {r["citation_id"] for r in held if r["kind"] == "true" and not r["unavailable"]
            and r["label"] in EXPERT_LABELS}
    wanted = located.filter(pc.is_in(located.column("citation_id"),
                                             pa.array(sorted(keep), pa.string())))
    labels = grader_labels(items, wanted, book, grader, environ)
    pairs = [{"human": EXPERT_LABELS[r["label"]], "grader": labels[r["citation_id"]],
              "question": r["question"], "system": r["system"]}
             for r in held if r["citation_id"] in keep and r["citation_id"] in labels]
    return {"overall": label_agreement(pairs),
            **{s: label_agreement([p for p in pairs if p["system"] == s], confusion=False)
               for s in systems}}


def held_out_claim(claim_id: str) -> bool:
    """The project's own labels are split by claim: odd last byte of SHA-256(claim_id) =
    held out (a fixed split: a claim's pairs stay on one side)."""
    return hashlib.sha256(claim_id.encode("utf-8")).digest()[-1] % 2 == 1


def project_report(derived: Path, version: str, grader: str) -> dict:
    """The grader's labels (``grader_judgments``) against the project's adjudicated human
    labels (``support_labels``, basis human, resolved) of every date of one codebook, on the
    held-out half of the claims; overall, per engine and per domain; bootstrap by answer."""
    from citeaudit import parquet_io

    con = duck.connect()
    try:
        for name in ("support_labels", "grader_judgments"):
            files = sorted(Path(derived).glob(f"{name}/observation_date=*/codebook={version}/"
                                              f"{parquet_io.DATA_FILE}"))
            if not files:
                raise FileNotFoundError(f"{derived}/{name}: no partition of codebook "
                                        f"{version}: run the pipeline first (citeaudit run)")
            con.read_parquet([str(f) for f in files], hive_partitioning=True).create_view(name)
        pairs = duck.query(con, "support/select_grader_validation_pairs",
                           {"grader": grader}).to_pylist()
    finally:
        con.close()
    rows = [{"human": r["human"], "grader": r["grader"], "question": r["answer_id"],
             "engine": r["engine"], "domain": r["domain"]}
            for r in pairs if held_out_claim(r["claim_id"])]
    out = {"overall": label_agreement(rows)}
    for key in ("engine", "domain"):
        for value in sorted({r[key] for r in rows if r[key] is not None}):
            out[f"{key}={value}"] = label_agreement([r for r in rows if r[key] == value],
                                                    confusion=False)
    return {"derived": str(derived), "codebook": version, "grader": grader,
            "pairs": len(pairs), "held_out": len(rows), "labels": out}
