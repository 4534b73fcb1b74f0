"""Answers ingestion: every defect is a rejected_inputs row naming source file and line, field,
reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citeaudit.ingest import answers


def good_answer(answer_id: str = "a1", **overrides: object) -> dict:
    answer = {
        "answer_id": answer_id,
        "query_id": "q1",
        "query_text": "is aspirin safe daily?",
        "engine": "inhouse_rag",
        "observed_at": "2026-11-01T10:00:00Z",
        "answer_text": "Aspirin thins blood. Ask a doctor.",
        "context_chunk_ids": ["c1", "c2"],
        "strata": {"domain": "health", "risk_band": "high", "inclusion_prob": 0.25},
        "cost": {"input_tokens": 100, "output_tokens": 20},
        "claims": [
            {
                "claim_id": f"{answer_id}-k0",
                "span": [0, 20],
                "text": "Aspirin thins blood.",
                "verification_worthy": True,
                "citations": [
                    {"citation_id": f"{answer_id}-x0", "tag": "[D1:c1]", "source_id": "D1"}
                ],
            }
        ],
    }
    answer.update(overrides)
    return answer


def ingest(tmp_path: Path, lines: list[str]) -> answers.IngestResult:
    folder = tmp_path / "answers" / "2026-11-01"
    folder.mkdir(parents=True)
    (folder / "eng.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return answers.ingest_files(answers.answer_files(tmp_path, "2026-11-01"), tmp_path)


def rejections(result: answers.IngestResult) -> list[tuple]:
    return [(r["source_line"], r["field"], r["reason"]) for r in result.rejected.to_pylist()]


def test_good_answer_is_split_into_tables(tmp_path: Path) -> None:
    result = ingest(tmp_path, [json.dumps(good_answer())])
    assert result.rejected.num_rows == 0
    row = result.answers.to_pylist()[0]
    assert row["answer_id"] == "a1" and row["context_chunk_ids"] == ["c1", "c2"]
    assert row["domain"] == "health" and row["inclusion_prob"] == 0.25
    assert result.claims.to_pylist()[0]["span_end"] == 20
    assert result.citations.to_pylist()[0]["tag"] == "[D1:c1]"


def test_blank_lines_are_skipped_and_line_numbers_kept(tmp_path: Path) -> None:
    result = ingest(tmp_path, ["", json.dumps(good_answer()), "   ", "{broken"])
    assert rejections(result) == [(4, None, "malformed_json")]
    assert result.answers.to_pylist()[0]["source_line"] == 2


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda a: a.pop("answer_id"), ("answer_id", "missing_field")),
        (lambda a: a.update(observed_at="yesterday"), ("observed_at", "invalid_timestamp")),
        (lambda a: a.update(observed_at="2026-11-01"), ("observed_at", "invalid_timestamp")),
        (
            lambda a: a["claims"][0].update(verification_worthy="U"),
            ("claims[0].verification_worthy", "wrong_type"),
        ),
        (lambda a: a["claims"][0].update(span=[0, 999]), ("claims[0].span", "span_out_of_range")),
        (lambda a: a["claims"][0].update(span=[5, 2]), ("claims[0].span", "span_out_of_range")),
        (lambda a: a["claims"][0].update(span="0-20"), ("claims[0].span", "wrong_type")),
        (
            lambda a: a["claims"][0]["citations"][0].pop("citation_id"),
            ("claims[0].citations[0].citation_id", "missing_field"),
        ),
        (lambda a: a["strata"].update(inclusion_prob=0), ("strata.inclusion_prob", "out_of_range")),
        (lambda a: a["cost"].update(input_tokens=-3), ("cost.input_tokens", "out_of_range")),
        (lambda a: a.update(claims={"not": "a list"}), ("claims", "wrong_type")),
        (lambda a: a.update(context_chunk_ids=["c1", 2]), ("context_chunk_ids", "wrong_type")),
    ],
)
def test_each_defect_rejects_the_line_with_one_reason(tmp_path: Path, mutate, expected) -> None:
    bad = good_answer("a2")
    mutate(bad)
    result = ingest(tmp_path, [json.dumps(good_answer("a1")), json.dumps(bad)])
    assert rejections(result) == [(2, *expected)]
    assert result.answers.column("answer_id").to_pylist() == ["a1"]
    assert result.rejected.to_pylist()[0]["raw"] == json.dumps(bad)


def test_optional_fields_may_be_absent_or_null(tmp_path: Path) -> None:
    answer = good_answer(cost=None)
    answer.pop("context_chunk_ids")
    answer["claims"][0]["verification_worthy"] = None
    result = ingest(tmp_path, [json.dumps(answer)])
    assert result.rejected.num_rows == 0
    row = result.answers.to_pylist()[0]
    assert row["context_chunk_ids"] is None and row["input_tokens"] is None


def test_duplicate_answer_id_keeps_the_first(tmp_path: Path) -> None:
    first, second = good_answer("a1"), good_answer("a1")
    second["claims"][0]["claim_id"] = "other"
    second["claims"][0]["citations"][0]["citation_id"] = "other-x"
    result = ingest(tmp_path, [json.dumps(first), json.dumps(second)])
    assert rejections(result) == [(2, "answer_id", "duplicate_id")]


def test_not_an_object_and_invalid_utf8(tmp_path: Path) -> None:
    folder = tmp_path / "answers" / "2026-11-01"
    folder.mkdir(parents=True)
    (folder / "eng.jsonl").write_bytes(b'[1, 2]\n{"answer_id": "\xff"}\n')
    result = answers.ingest_files(answers.answer_files(tmp_path, "2026-11-01"), tmp_path)
    assert rejections(result) == [(1, None, "not_an_object"), (2, None, "invalid_utf8")]
    assert result.rejected.column("source_file").to_pylist()[0] == "answers/2026-11-01/eng.jsonl"


def test_empty_date_gives_empty_tables(tmp_path: Path) -> None:
    result = answers.ingest_files([], tmp_path)
    assert result.answers.num_rows == 0 and result.rejected.num_rows == 0
    assert "answer_id" in result.answers.column_names


def test_batch_size_does_not_change_the_result(tmp_path: Path) -> None:
    """Duplicates are caught across batches, so batching only bounds memory."""
    lines = [json.dumps(good_answer(f"a{i}")) for i in range(7)]
    lines.insert(5, json.dumps(good_answer("a1")))  # a duplicate of line 2, batches apart
    lines.insert(3, "{not json")
    folder = tmp_path / "answers" / "2026-11-01"
    folder.mkdir(parents=True)
    (folder / "eng.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    files = answers.answer_files(tmp_path, "2026-11-01")
    whole = answers.ingest_files(files, tmp_path, batch_lines=1000)
    assert rejections(whole) == [
        (4, None, "malformed_json"),
        (7, "answer_id", "duplicate_id"),
        (7, "claims[0].citations[0].citation_id", "duplicate_id"),
        (7, "claims[0].claim_id", "duplicate_id"),
    ]
    for size in (1, 2, 3):
        batched = answers.ingest_files(files, tmp_path, batch_lines=size)
        for name in ("answers", "claims", "citations", "rejected"):
            assert getattr(batched, name).equals(getattr(whole, name)), (size, name)
