"""The fail-closed verification rule (docs/references.md#fail-closed-verification), one case
each: first failure wins, zero claims verified; "every claim is cited" only where the rule holds
(declared context or a claim marked verification-worthy), else an uncited claim of unknown
worthiness is unresolved and one marked not worthy is exempt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citeaudit.citations import checks
from citeaudit.ingest import answers


def answer(answer_id: str, claims: list[list[dict]], context: list[str] | None,
           worthy: list[bool | None] | None = None) -> dict:
    text = " ".join(f"Claim {i}." for i in range(len(claims))) or "I cannot answer that."
    out = {
        "answer_id": answer_id,
        "query_id": "q",
        "query_text": "q",
        "engine": "inhouse_rag" if context is not None else "perplexity",
        "observed_at": "2026-11-01T00:00:00Z",
        "answer_text": text,
        "strata": {"domain": "news", "risk_band": "low", "inclusion_prob": 1},
        "claims": [
            {
                "claim_id": f"{answer_id}-{i}",
                "span": [i * 9, i * 9 + 8],
                "text": f"Claim {i}.",
                "verification_worthy": worthy[i] if worthy else True,
                "citations": [
                    {"citation_id": f"{answer_id}-{i}-{j}", **c} for j, c in enumerate(cites)
                ],
            }
            for i, cites in enumerate(claims)
        ],
    }
    if context is not None:
        out["context_chunk_ids"] = context
    return out


def verdict(tmp_path: Path, a: dict) -> dict:
    folder = tmp_path / "answers" / "2026-11-01"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "e.jsonl").write_text(json.dumps(a) + "\n")
    result = answers.ingest_files(answers.answer_files(tmp_path, "2026-11-01"), tmp_path)
    assert result.rejected.num_rows == 0, result.rejected.to_pylist()
    claim_checks, answer_checks = checks.check(result.answers, result.claims, result.citations)
    row = answer_checks.to_pylist()[0]
    out = {k: row[k] for k in ("verdict", "reason", "claim_index", "served")}
    out["claims"] = [(r["verdict"], r["reason"]) for r in claim_checks.to_pylist()]
    return out


OK = {"tag": "[D1:c1]"}


@pytest.mark.parametrize(
    ("claims", "context", "expected"),
    [
        ([], ["c1"], (True, None, None)),
        ([[OK], [OK]], ["c1"], (True, None, None)),
        ([[OK], []], ["c1"], (False, "missing_citation", 1)),
        ([[{"tag": "[D1 :c1]"}]], ["c1"], (False, "malformed_citation", 0)),
        ([[{"tag": "[D1]"}]], ["c1"], (False, "malformed_citation", 0)),
        ([[{"tag": "[:c1]"}]], ["c1"], (False, "malformed_citation", 0)),
        ([[{"tag": "D1:c1"}]], ["c1"], (False, "malformed_citation", 0)),
        ([[{"tag": "[D1:c1:x]"}]], ["c1"], (False, "malformed_citation", 0)),
        ([[{"url": "https://example.org/a"}]], ["c1"], (False, "malformed_citation", 0)),
        ([[{"tag": "[D1:c9]"}]], ["c1"], (False, "hallucinated_citation", 0)),
        ([[{"tag": "[D1:c1]"}]], [], (False, "hallucinated_citation", 0)),
        # first failure wins: claim 0 passes, claim 1 is hallucinated, claim 2 uncited
        ([[OK], [OK, {"tag": "[D2:c7]"}], []], ["c1"], (False, "hallucinated_citation", 1)),
        # within a claim the first failing citation decides: malformed before hallucinated
        ([[{"tag": "[D2 c7]"}, {"tag": "[D2:c7]"}]], ["c1"], (False, "malformed_citation", 0)),
        ([[{"url": "https://example.org/a?utm_source=x"}]], None, (True, None, None)),
        ([[{"url": "htp//example.org/a"}]], None, (False, "malformed_citation", 0)),
        ([[{"url": ""}]], None, (False, "malformed_citation", 0)),
        ([[{"source_id": "S1"}]], None, (False, "malformed_citation", 0)),
    ],
)
def test_fail_closed_verification_rules(tmp_path: Path, claims, context, expected) -> None:
    got = verdict(tmp_path, answer("a", claims, context))
    assert (got["verdict"] == "verified", got["reason"], got["claim_index"]) == expected
    assert got["verdict"] in ("verified", "rejected")
    assert got["served"] == (got["verdict"] == "verified")


NONE, NO = None, False
WEB = {"url": "https://example.org/a"}


@pytest.mark.parametrize(
    ("claims", "context", "worthy", "expected", "claim_verdicts"),
    [
        # a web engine's uncited sentence nobody judged: unresolved, never rejected or passed
        ([[WEB], []], None, [True, NONE], ("unresolved", "worthiness_unknown", 1),
         [("pass", None), ("unresolved", "worthiness_unknown")]),
        # judged not worthy: exempt, the answer is verified
        ([[WEB], []], None, [True, NO], ("verified", None, None),
         [("pass", None), ("exempt", "not_verification_worthy")]),
        # marked worthy and uncited: the rule holds, rejected
        ([[], [WEB]], None, [True, True], ("rejected", "missing_citation", 0),
         [("fail", "missing_citation"), ("pass", None)]),
        # a failure anywhere outranks an earlier unresolved claim
        ([[], [{"url": "nope"}]], None, [NONE, NONE], ("rejected", "malformed_citation", 1),
         [("unresolved", "worthiness_unknown"), ("fail", "malformed_citation")]),
        # a RAG answer declares its context: every claim must be cited whatever its flag
        ([[OK], []], ["c1"], [True, NONE], ("rejected", "missing_citation", 1),
         [("pass", None), ("fail", "missing_citation")]),
        ([[OK], []], ["c1"], [True, NO], ("rejected", "missing_citation", 1),
         [("pass", None), ("fail", "missing_citation")]),
        # a cited claim of unknown worthiness is still checked for a well-formed citation
        ([[WEB]], None, [NONE], ("verified", None, None), [("pass", None)]),
    ],
)
def test_the_gate_applies_where_its_rule_holds(tmp_path: Path, claims, context, worthy,
                                                expected, claim_verdicts) -> None:
    got = verdict(tmp_path, answer("a", claims, context, worthy))
    assert (got["verdict"], got["reason"], got["claim_index"]) == expected
    assert got["claims"] == claim_verdicts
    assert got["served"] == (got["verdict"] == "verified")


def test_worthiness_signal_is_a_grader_signal_never_a_verdict(tmp_path: Path) -> None:
    """The rule-based worthiness grader names questions, offers, headings and boilerplate; an
    uncited sentence it flags stays unresolved (the gate never reads the signal)."""
    texts = ["Would you like me to compare them?", "Would you like me to:",
             "Here are the options:", "Short answer first — yes.", "Rates rose 3% in May.",
             "## Sources"]
    a = answer("a", [[] for _ in texts], None, [None] * len(texts))
    pos = 0
    for claim, text in zip(a["claims"], texts, strict=True):
        claim["text"], claim["span"] = text, [pos, pos + len(text)]
        pos += len(text) + 1
    a["answer_text"] = " ".join(texts)
    folder = tmp_path / "answers" / "2026-11-01"
    folder.mkdir(parents=True)
    (folder / "e.jsonl").write_text(json.dumps(a) + "\n")
    result = answers.ingest_files(answers.answer_files(tmp_path, "2026-11-01"), tmp_path)
    assert result.rejected.num_rows == 0, result.rejected.to_pylist()
    claim_checks, answer_checks = checks.check(result.answers, result.claims, result.citations)
    rows = claim_checks.to_pylist()
    assert [r["worthiness_signal"] for r in rows] == [
        "question", "offer", "heading", "boilerplate", None, "heading"]
    assert {r["verdict"] for r in rows} == {"unresolved"}
    assert answer_checks.to_pylist()[0]["verdict"] == "unresolved"
