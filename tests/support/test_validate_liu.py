"""``validate-grader liu``: a grader against Liu et al.'s annotators on the real
``intrinsic_halls.json`` (the annotators' evidence sentence as the page), every judgment
accounted for; the ``llm`` grader through the same command against a loopback judge stand-in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citeaudit import cli, codebook
from citeaudit.demo_corpus.judge_standin import JudgeStandIn, Reply
from citeaudit.support import cli as support_cli
from citeaudit.support import validate, validate_liu

BOOK = codebook.validate({"version": "defaults", "label_maps": {"x": {"y": "unresolved"}},
                          "source_roles": {}, "priority_weights": {"w": 1.0},
                          "policy": {"contextualize_above": 0.5}}, "(defaults)")


def liu_file(corpora: Path) -> Path:
    return corpora / "annotations" / "liu-verifiability" / "intrinsic_halls.json"


def record(rid: str, notes: dict) -> dict:
    return {"id": rid, "query": f"query {rid}", "response": "", "split": "s",
            "system_name": "neeva", "citations": [], "statements_to_citation_texts": {},
            "annotation": {"statement_to_annotation": notes}}


def test_load_pairs_swaps_and_counts(tmp_path) -> None:
    ann = {
        "Alpha beta gamma.": {"citation_annotations": [
            {"citation_text": "[1]", "citation_supports": validate_liu.COMPLETE,
             "evidence": "alpha beta gamma here"},
            {"citation_text": "[2]", "citation_supports": validate_liu.COMPLETE,
             "evidence": "alpha beta gamma there"}]},
        "Delta epsilon.": {"citation_annotations": [
            {"citation_text": "[3]", "citation_supports": validate_liu.PARTIAL,
             "evidence": "delta only"},
            {"citation_text": "[4]", "citation_supports": validate_liu.REFUTES,
             "evidence": None}]},
        "Zeta.": {"citation_annotations": [
            {"citation_text": "[5]", "citation_supports": validate_liu.COMPLETE,
             "evidence": "  "}]},
        "Eta.": {},
    }
    path = tmp_path / "liu.json"
    path.write_text(json.dumps([record("r1", ann)]))
    items, judged = validate_liu.load(path)
    kinds = {cid: m["kind"] for cid, m in items.meta.items()}
    assert sorted(kinds.values()) == ["swapped", "swapped", "true", "true", "true"]
    # a Complete statement is swapped with another statement's evidence, never its own
    texts = dict(zip(items.texts.column("payload_sha256").to_pylist(),
                     items.texts.column("text").to_pylist(), strict=True))
    swaps = {r["citation_id"]: texts[r["payload_sha256"]] for r in items.pairs.to_pylist()
             if r["citation_id"].endswith(":swap")}
    assert swaps == {"liu-r1:s00:c00:swap": "delta only", "liu-r1:s00:c01:swap": "delta only"}
    counts = validate_liu.ungradeable_counts(judged)
    assert counts[validate_liu.COMPLETE] == {"judged": 3, "gradeable": 2, "no_passage": 1}
    assert counts[validate_liu.REFUTES] == {"judged": 1, "gradeable": 0, "no_passage": 1}
    assert sum(c["judged"] for c in counts.values()) == len(judged) == 5


def test_validate_grader_liu_locator(corpora, capsys, monkeypatch) -> None:
    """The command on the real file: every judgment counted by label, the decorative test and
    Complete vs Partial with intervals, the bias note and the limits printed."""
    monkeypatch.setattr(validate, "REPLICATES", 200)
    path = liu_file(corpora)
    assert cli.main(["validate-grader", "liu", str(path), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["answers"] == 114 == rep["answers_with_refuting_citation"]
    counts = rep["not_gradeable"]
    assert counts[validate_liu.COMPLETE] == {"judged": 203, "gradeable": 200, "no_passage": 3}
    assert counts[validate_liu.PARTIAL] == {"judged": 59, "gradeable": 59}
    assert counts[validate_liu.REFUTES]["no_passage"] == 139
    assert sum(c["judged"] for c in counts.values()) == rep["judgments"] == 445
    assert rep["gradeable"] == rep["pairs"]["true"] == 259
    assert rep["pairs"]["without_grader_label"] == 0
    # the grader separates decorative citations from true ones better than chance
    dec = rep["decorative"]["overall"]
    assert dec["auc_grader"][1] > 0.5 and dec["grader_true_passed"][0] >= 0.85
    labels = rep["labels"]["overall"]
    assert labels["n"] == [259]
    assert labels["balanced_accuracy"][1] <= labels["balanced_accuracy"][0] \
        <= labels["balanced_accuracy"][2]
    assert any(k.startswith("human=partially_supported") for k in labels)
    assert {"neeva", "perplexity"} <= set(rep["labels"])
    support_cli.print_liu(rep)
    out = capsys.readouterr().out
    assert "BIASED SUBSET" in out and "LIMITS" in out and "no_passage 139" in out
    assert "confusion (overall" in out
    assert cli.main(["validate-grader", "liu", str(path.with_name("missing"))]) == 2


def test_validate_grader_liu_llm_standin(corpora, tmp_path, monkeypatch) -> None:
    """The ``llm`` grader through the same report, over real HTTP: a stand-in that passes
    true pairs and rejects swapped ones, with one malformed reply (never a label)."""
    monkeypatch.setattr(validate, "REPLICATES", 100)
    records = json.loads(liu_file(corpora).read_text(encoding="utf-8"))[:8]
    path = tmp_path / "liu8.json"
    path.write_text(json.dumps(records))
    items, _ = validate_liu.load(path)
    bad = next(c for c, m in sorted(items.meta.items())
               if m["kind"] == "true" and m["label"] == "Complete")
    bad_swap = next(c for c, m in sorted(items.meta.items()) if m["kind"] == "swapped")

    def policy(claim: str, passage: str, n: int, pair: str | None) -> Reply:
        assert pair is not None
        if pair.endswith("/" + bad) or pair.endswith("/" + bad_swap):
            return Reply(content="not json")
        return Reply(label="unsupported" if pair.endswith(":swap") else "fully_supported")

    with JudgeStandIn(policy) as server:
        env = {"CITEAUDIT_JUDGE_BASE_URL": server.base_url, "CITEAUDIT_JUDGE_MODEL": "stand-in",
               "CITEAUDIT_JUDGE_RATE": "1000", "CITEAUDIT_JUDGE_MAX_RETRIES": "0",
               "CITEAUDIT_JUDGE_TIMEOUT": "5"}
        rep = validate_liu.report(path, BOOK, "llm", env)
    dec = rep["decorative_labels"]["overall"]
    n_true, n_swapped = dec["n_true"][0], dec["n_swapped"][0]
    # a malformed reply is an unresolved label: counted, never a flag nor a pass
    assert dec["swapped_flagged"][0] == pytest.approx((n_swapped - 1) / n_swapped)
    assert dec["swapped_unresolved"][0] == pytest.approx(1 / n_swapped)
    assert dec["true_passed"][0] == pytest.approx((n_true - 1) / n_true)
    assert dec["true_unresolved"][0] == pytest.approx(1 / n_true)
    labels = rep["labels"]["overall"]
    assert labels["n"] == (rep["pairs"]["true"],)
    assert [k for k in labels if "grader=unresolved" in k] == \
        ["human=fully_supported grader=unresolved (n=1)"]
