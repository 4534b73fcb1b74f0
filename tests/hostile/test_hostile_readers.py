"""Every reader rejects, none crashes: the engine, Liu and ExpertQA importers and the codebook
loader on crafted inputs (the ones that crashed or blew up before): a named rejection (file,
line, field, reason) for the bad item, the rest of the batch written, memory bounded."""

from __future__ import annotations

import json
import resource
from pathlib import Path

import pytest
import yaml
from _hostile import accepted_reasons, deep

from citeaudit import codebook
from citeaudit.demo_corpus.codebooks import codebook as demo_codebook
from citeaudit.imports import engines, expertqa, liu

GOOD_CHAT = {
    "id": "chatcmpl-1", "model": "gpt-4o-search-preview", "created": 1760000000,
    "choices": [{"message": {"role": "assistant", "content": "The sky is blue. ([a.org](https://a.org/x))",
                             "annotations": [{"type": "url_citation", "url_citation": {
                                 "start_index": 17, "end_index": 42, "url": "https://a.org/x",
                                 "title": "a"}}]}}],
}


def _rejections(raw: Path) -> list[dict]:
    return [json.loads(line) for p in sorted(raw.glob("import_rejections/*/*.jsonl"))
            for line in p.read_text(encoding="utf-8").splitlines()]


def _answers(raw: Path) -> list[dict]:
    return [json.loads(line) for p in sorted(raw.glob("answers/*/*.jsonl"))
            for line in p.read_text(encoding="utf-8").splitlines()]


def test_engine_batch_keeps_the_good_responses(tmp_path: Path) -> None:
    """One JSONL file: good, created 1e20, 1,000-level nesting, invalid UTF-8, NaN, a lone
    surrogate, model of the wrong type: one answer per good line, one named rejection each."""
    good = json.dumps(GOOD_CHAT).encode()
    lines = [
        good,
        json.dumps({**GOOD_CHAT, "created": 1e20}).encode(),
        good.replace(b'{"id"', b'{"x": ' + b"[" * 1000 + b"]" * 1000 + b', "id"', 1),
        good.replace(b"The sky", b"The \xff\xfe sky"),
        json.dumps({**GOOD_CHAT, "created": float("nan")}).encode(),
        json.dumps({**GOOD_CHAT, "id": "\ud800"}).encode(),
        json.dumps({**GOOD_CHAT, "model": {"a": 1}}).encode(),
        json.dumps({**GOOD_CHAT, "created": 1760000100}).encode(),
    ]
    src = tmp_path / "batch.jsonl"
    src.write_bytes(b"\n".join(lines) + b"\n")
    raw = tmp_path / "raw"
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    [summary] = engines.import_paths("openai", [src], raw)
    assert summary["answers"] == 2 and summary["rejected_responses"] == 6
    got = {(r["line"], r["field"], r["reason"]) for r in _rejections(raw)}
    assert got == {(2, "created", "invalid_timestamp"), (3, "", "too_deep"),
                   (4, "", "invalid_utf8"), (5, "", "invalid_number"), (6, "", "invalid_utf8"),
                   (7, "model", "wrong_type")}
    assert all(r["file"].startswith("responses/openai/") for r in _rejections(raw))
    assert {r["reason"] for r in _rejections(raw)} <= accepted_reasons()
    assert "\ufffd" not in json.dumps(_answers(raw), ensure_ascii=False)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # KiB


def test_engine_file_of_invalid_utf8_is_one_rejection(tmp_path: Path) -> None:
    src = tmp_path / "one.json"
    src.write_bytes(json.dumps(GOOD_CHAT).encode().replace(b"sky", b"sk\xc3"))
    [summary] = engines.import_paths("openai", [src], tmp_path / "raw")
    assert summary["answers"] == 0
    [row] = _rejections(tmp_path / "raw")
    assert (row["line"], row["reason"]) == (1, "invalid_utf8") and "byte" in row["detail"]


def _liu_record(i: int) -> dict:
    text = f"Statement {i} is true[1]."
    return {"id": f"r{i}", "query": "q?", "response": text, "split": "allsouls",
            "system_name": "bing_chat",
            "citations": [{"text": "[1]", "start_index": text.index("[1]"), "end_index": 0,
                           "link_target": "https://a.org/"}],
            "statements_to_citation_texts": {text: ["[1]"]},
            "annotation": {"statement_to_annotation": {text: {
                "statement_is_verification_worthy": True, "statement_supported": "Complete Support",
                "citation_annotations": [{"citation_text": "[1]",
                                          "citation_supports": "Complete Support"}]}}}}


def test_liu_bad_records_are_rejections_the_rest_imported(tmp_path: Path) -> None:
    records = [_liu_record(0), _liu_record(1), _liu_record(2), _liu_record(3), _liu_record(4),
               _liu_record(5)]
    records[1]["response"] = 17
    records[2]["citations"][0]["start_index"] = "4"
    records[3]["system_name"] = "../../escape"
    records[4]["statements_to_citation_texts"] = {"not in the text": ["[1]"]}
    records[5]["annotation"] = deep(30)
    src = tmp_path / "liu.json"
    src.write_text(json.dumps(records), encoding="utf-8")
    out = tmp_path / "raw"
    summary = liu.import_file(src, out)
    assert summary["answers"] == 2 and summary["rejected_records"] == 4
    got = {(r["line"], r["field"], r["reason"]) for r in _rejections(out)}
    assert got == {(2, "response", "wrong_type"), (3, "citations[0].start_index", "wrong_type"),
                   (5, "statements_to_citation_texts", "span_text_mismatch"),
                   (6, "annotation", "wrong_type")}
    # a system name from the data never leaves answers/<date>/
    assert all(p.parent.parent == out / "answers" for p in out.rglob("*.jsonl")
               if "answers" in p.parts)
    assert {a["engine"] for a in _answers(out)} == {"bing_chat", "../../escape"}


def test_liu_file_that_is_not_a_list_is_one_rejection(tmp_path: Path) -> None:
    src = tmp_path / "liu.json"
    src.write_text('{"id": 1}', encoding="utf-8")
    assert liu.import_file(src, tmp_path / "raw")["rejected_records"] == 1
    assert [r["reason"] for r in _rejections(tmp_path / "raw")] == ["wrong_type"]


def test_expertqa_bad_lines_are_rejections_the_rest_imported(tmp_path: Path) -> None:
    def line(q: str) -> dict:
        return {"question": q, "annotator_id": "a1", "metadata": {"field": "Law"},
                "answers": {"gpt4": {"answer_string": f"{q} is answered.", "claims": [
                    {"claim_string": f"{q} is answered.", "support": "Complete",
                     "evidence": ["[1] https://a.org/ passage"]}]}}}
    bad_claim = line("q4")
    bad_claim["answers"]["gpt4"]["claims"][0]["evidence"] = [{"url": 1}]
    rows = [json.dumps(line("q1")).encode(), b"\xff{", b"[" * 3000, json.dumps(bad_claim).encode(),
            json.dumps({**line("q5"), "created": 1e400}).encode().replace(b"1e+400", b"1e400"),
            json.dumps(line("q6")).encode()]
    src = tmp_path / "eqa.jsonl"
    src.write_bytes(b"\n".join(rows) + b"\n")
    summary = expertqa.import_file(src, tmp_path / "raw")
    assert summary["answers"] == 2 and summary["rejected_lines"] == 4
    got = {(r["line"], r["field"], r["reason"]) for r in _rejections(tmp_path / "raw")}
    assert got == {(2, "", "invalid_utf8"), (3, "", "too_deep"),
                   (4, "answers.gpt4.claims[0].evidence[0]", "wrong_type"),
                   (5, "", "invalid_number")}
    assert {r["reason"] for r in _rejections(tmp_path / "raw")} <= accepted_reasons()


def _bomb(levels: int, width: int = 9) -> str:
    """A billion-laughs codebook: each level is ``width`` aliases of the level before (a few
    hundred bytes that would expand to ``9 * width ** (levels - 1)`` strings)."""
    lines = ["version: v1", "x0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"x{k}: &l{k} [" + ", ".join([f"*l{k - 1}"] * width) + "]"
              for k in range(1, levels)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name, text, message", [
    ("laughs", None, "aliases"),
    ("unhashable", "version: v1\n? [a, b]\n: 1\n", "mapping key must be a plain value"),
    ("deep", "version: v1\nx: " + "[" * 5000 + "]" * 5000 + "\n", "nested deeper than"),
    ("big", "version: v1\ndescription: " + "a" * 1_100_000 + "\n", "bytes; a codebook is at"),
    ("wrong type", "version: v1\nlabel_maps: {s: [1]}\n", "v1.yaml"),
])
def test_codebook_limits_hold_before_expansion(tmp_path: Path, name: str, text: str | None,
                                               message: str) -> None:
    path = tmp_path / "v1.yaml"
    path.write_text(text if text is not None else _bomb(13), encoding="utf-8")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(codebook.CodebookError) as err:
        codebook.load(path)
    assert str(path) in str(err.value) and message in str(err.value)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # KiB


def test_codebook_aliases_that_expand_too_far_are_refused(tmp_path: Path) -> None:
    """Within the alias count, still refused once the expansion passes the node limit."""
    path = tmp_path / "v1.yaml"
    path.write_text(_bomb(8, width=10), encoding="utf-8")
    with pytest.raises(codebook.CodebookError, match="expand to more than"):
        codebook.load(path)


@pytest.mark.parametrize("stem", ["v=1", "v 1", "-v1", "v1\x1b"])
def test_codebook_version_that_cannot_be_a_partition_is_refused(tmp_path: Path,
                                                                stem: str) -> None:
    path = tmp_path / f"{stem}.yaml"
    path.write_text(yaml.safe_dump({**demo_codebook("v1"), "version": stem}), encoding="utf-8")
    with pytest.raises(codebook.CodebookError, match="cannot name a codebook version"):
        codebook.load(path)


@pytest.mark.parametrize("text, message", [
    (None, "aliases"),
    ("fetch: {contact: [1, 2]}\n", "citeaudit.yaml"),
    ("fetch: 1\nfetch: 2\n", "appears twice"),
    ("fetch:\n  contact: " + "[" * 2000 + "]" * 2000 + "\n", "nested"),
])
def test_config_file_limits_and_types(tmp_path: Path, text: str | None, message: str) -> None:
    from citeaudit import config

    path = tmp_path / "citeaudit.yaml"
    path.write_text(text if text is not None else _bomb(13), encoding="utf-8")
    with pytest.raises(config.ConfigError) as err:
        config.load_file(path)
    assert str(path) in str(err.value) and message in str(err.value)
