"""Fuzz: the four engine importers, the Liu/ExpertQA importers and the codebook loader on
mutations of real inputs (../shared/corpora and the documented codebook). Zero tracebacks: every
input is accepted (an answer that serializes as strict JSON) or rejected with a reason
docs/tables.md lists (a :class:`CodebookError` naming the file, for codebooks)."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
import yaml
from _hostile import DELETE, HOSTILE_VALUES, accepted_reasons, corpora, paths, replaced
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citeaudit import codebook
from citeaudit.demo_corpus.codebooks import codebook as demo_codebook
from citeaudit.imports import engines, expertqa, liu

FOLDERS = {"openai-responses": "openai", "openai-chat-search": "openai", "gemini": "gemini",
           "anthropic": "anthropic", "perplexity": "perplexity"}
# CITEAUDIT_FUZZ_EXAMPLES=5000 runs a longer, randomized search (the default is fixed and fast).
EXAMPLES = int(os.environ.get("CITEAUDIT_FUZZ_EXAMPLES", "0"))
FUZZ = settings(max_examples=EXAMPLES or 100, deadline=None, derandomize=not EXAMPLES,
                database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
REASONS = accepted_reasons()


@pytest.fixture(scope="module")
def responses() -> list[tuple[str, Any]]:
    root = corpora() / "answers" / "engines"
    out = [(fmt, json.loads(p.read_text(encoding="utf-8")))
           for folder, fmt in sorted(FOLDERS.items())
           for p in sorted((root / folder).glob("*.json"))]
    if not out:
        pytest.skip(f"no engine responses under {root}")
    return out


@pytest.fixture(scope="module")
def liu_records() -> list[dict]:
    path = corpora() / "annotations" / "liu-verifiability" / "sampled_elements.json"
    return json.loads(path.read_text(encoding="utf-8"))[:3]


@pytest.fixture(scope="module")
def expertqa_lines() -> list[dict]:
    path = corpora() / "annotations" / "expertqa" / "domain_val.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[:3]]


def mutate(data: st.DataObject, obj: Any) -> Any:
    """``obj`` with one to three values replaced by a hostile one (or deleted)."""
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        at = data.draw(st.sampled_from(paths(obj)), label="path")
        value = data.draw(st.sampled_from([*HOSTILE_VALUES, DELETE]) if at else
                          st.sampled_from(HOSTILE_VALUES), label="value")
        obj = replaced(obj, at, value)
    return obj


def as_text(data: st.DataObject, obj: Any) -> str:
    """The JSON text of ``obj``, sometimes truncated or with a character spliced in."""
    text = json.dumps(obj, ensure_ascii=False)
    cut = data.draw(st.sampled_from(["none", "truncate", "splice"]), label="text mutation")
    if cut == "truncate":
        return text[: data.draw(st.integers(0, max(0, len(text) - 1)))]
    if cut == "splice":
        k = data.draw(st.integers(0, len(text)))
        splice = data.draw(st.sampled_from(['"', "{", "]", "\\", ",", "\x00", "1e999"]))
        return text[:k] + splice + text[k:]
    return text


def assert_outcome(o: engines.Outcome) -> None:
    if o.answer is not None:
        assert not o.defects
        json.dumps(o.answer, ensure_ascii=False, allow_nan=False).encode("utf-8")
    else:
        assert o.defects, "a rejection without a reason"
        for d in o.defects:
            assert d.reason in REASONS, f"{d.reason} is not in docs/tables.md"


@FUZZ
@given(data=st.data())
def test_engine_importers_never_crash(responses, data: st.DataObject) -> None:
    fmt, obj = data.draw(st.sampled_from(responses), label="response")
    text = as_text(data, mutate(data, obj))
    assert_outcome(engines.convert(fmt, text, line=1, engine=fmt, observed_at=None, query=None,
                                   origin={"file": "fuzz.json"}))


@FUZZ
@given(data=st.data())
def test_engine_importers_on_raw_bytes(responses, data: st.DataObject) -> None:
    fmt, obj = data.draw(st.sampled_from(responses), label="response")
    raw = bytearray(json.dumps(obj).encode("utf-8"))
    for _ in range(data.draw(st.integers(1, 4))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    assert_outcome(engines.convert(fmt, engines.decoded(bytes(raw)), line=1, engine=fmt,
                                   observed_at=None, query=None, origin={"file": "fuzz.json"}))


def check_split(answers: dict, rows: list, rejected: list, n: int) -> None:
    """Every record is accepted or rejected with a documented reason, nothing in between."""
    for r in rejected:
        assert r["reason"] in REASONS and r["line"] >= 1
    json.dumps(answers, ensure_ascii=False, allow_nan=False).encode("utf-8")
    assert len({r["line"] for r in rejected}) + sum(len(a) for a in answers.values()) >= n


@FUZZ
@given(data=st.data())
def test_liu_importer_never_crashes(liu_records, data: st.DataObject) -> None:
    k = data.draw(st.integers(0, len(liu_records) - 1), label="record")
    records = [*liu_records[:k], mutate(data, liu_records[k]), *liu_records[k + 1:]]
    answers, rows, rejected = liu.convert(records, "2023-03-01", "fuzz.json")
    for r in rejected:
        assert r["reason"] in REASONS
    json.dumps(answers, ensure_ascii=False, allow_nan=False).encode("utf-8")
    assert len(rejected) + sum(len(a) for a in answers.values()) == len(records)


@FUZZ
@given(data=st.data())
def test_expertqa_importer_never_crashes(expertqa_lines, data: st.DataObject) -> None:
    k = data.draw(st.integers(0, len(expertqa_lines) - 1), label="line")
    lines = [*expertqa_lines[:k], mutate(data, expertqa_lines[k]), *expertqa_lines[k + 1:]]
    answers, rows, rejected = expertqa.convert(lines, "2023-06-01", "fuzz.jsonl")
    for r in rejected:
        assert r["reason"] in REASONS
    json.dumps(answers, ensure_ascii=False, allow_nan=False).encode("utf-8")
    assert len({r["line"] for r in rejected}) + len({a["answer_id"].split("-")[1]
                                                      for v in answers.values() for a in v}) \
        == len(lines)


@pytest.fixture(scope="module")
def book() -> dict:
    return demo_codebook("v1")


@FUZZ
@given(data=st.data())
def test_codebook_loader_never_crashes(book, data: st.DataObject, tmp_path_factory) -> None:
    doc = mutate(data, book)
    try:
        text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    except (yaml.YAMLError, RecursionError):
        return  # not a document YAML can write; nothing to load
    if data.draw(st.booleans(), label="text mutation"):
        k = data.draw(st.integers(0, len(text)))
        splice = data.draw(st.sampled_from(["&a ", "*a", ": ", "\n  - ", "? ", "[", "\t",
                                            "!!python/object:os.system ", "\x00", "\xff"]))
        text = text[:k] + splice + text[k:]
    path = tmp_path_factory.mktemp("cb") / "v1.yaml"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        codebook.load(path)
    except codebook.CodebookError as exc:
        assert str(path) in str(exc)


@pytest.fixture(scope="module")
def registry_bodies() -> list[tuple[str, Any]]:
    root = corpora() / "scholarly"
    out = [(reg, json.loads(p.read_text(encoding="utf-8")))
           for reg, folder in (("crossref", "crossref-works"), ("openalex", "openalex-works"))
           for p in sorted((root / folder).glob("*.json"))[:6]]
    if not out:
        pytest.skip(f"no registry bodies under {root}")
    return out


@FUZZ
@given(data=st.data())
def test_registry_records_never_crash(registry_bodies, data: st.DataObject) -> None:
    """A registry reply of any shape is a found record, or an ``invalid`` lookup whose verdict
    is unresolved: never an exception out of the metadata step."""
    from citeaudit.scholarly import clients, compare

    registry, body = data.draw(st.sampled_from(registry_bodies), label="body")
    text = json.dumps(mutate(data, body), ensure_ascii=False)
    fetch = clients.Fetch(registry, "work", "10.1/x", 200, "found", text)
    lookup = clients.parse_lookup(fetch)
    assert lookup.status in ("found", "invalid")
    other = clients.parse_lookup(clients.Fetch("openalex", "work", "10.1/x", 404, "not_found",
                                               None))
    pair = (lookup, other) if registry == "crossref" else (other, lookup)
    th = compare.Thresholds(title_similarity=90, search_similarity=85, year_tolerance=1)
    verdict = compare.decide(compare.Cited("A title", ("A B",), 2020, None), "10.1/x", *pair, th)
    assert verdict.verdict in ("consistent", "mismatch", "not_found", "unmatched", "unresolved")
