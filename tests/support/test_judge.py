"""The ``llm`` grader against a loopback OpenAI-compatible stand-in (real HTTP, the official
``openai`` SDK): labels, the reply cache (a rerun asks nothing and gives the same bytes), and
the faults: 429 with Retry-After, 5xx, a timeout, a malformed reply, a label outside the set,
a client error; none of them ever becomes a label."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from citeaudit.codebook import validate
from citeaudit.demo_corpus.judge_standin import JudgeStandIn, Reply
from citeaudit.support import graders, judge

BOOK = validate({"version": "t", "label_maps": {"s": {"x": "unresolved"}},
                 "source_roles": {}, "priority_weights": {"w": 1.0},
                 "policy": {"contextualize_above": 0.5}}, "(test)")

SCENARIOS = ["ok", "unsupported", "rate_limited", "server_error", "slow", "malformed",
             "outside_set", "bad_request", "always_500", "fenced"]


def policy(claim: str, passage: str, n: int, pair: str | None) -> Reply:
    assert pair == f"c-{claim}/t"  # the grader names the pair beside the request
    if claim == "ok":
        return Reply(label="fully_supported", confidence=0.93)
    if claim == "unsupported":
        return Reply(label="unsupported", confidence=0.7)
    if claim == "rate_limited":
        return Reply(status=429, headers={"Retry-After": "0"}) if n == 1 else \
            Reply(label="partially_supported")
    if claim == "server_error":
        return Reply(status=503) if n <= 2 else Reply(label="contradicted")
    if claim == "slow":
        return Reply(label="fully_supported", delay=1.5) if n == 1 else \
            Reply(label="fully_supported")
    if claim == "malformed":
        return Reply(body=b'{"choices": [{"message": {"content": "{\\"label\\": "}}]}')
    if claim == "outside_set":
        return Reply(label="supported")
    if claim == "bad_request":
        return Reply(status=400)
    if claim == "always_500":
        return Reply(status=500)
    if claim == "fenced":
        return Reply(content='```json\n{"label": "fully_supported", "confidence": 1}\n```')
    raise AssertionError(claim)


def items(extra: list[dict] | None = None) -> pa.Table:
    when = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    rows = [{"answer_id": "a", "claim_id": f"c-{s}", "citation_id": "t", "engine": "e",
             "domain": "d", "claim_text": s, "passage_text": f"passage for {s}",
             "page_reason": None, "n_unresolved": 0, "capture_time": when}
            for s in SCENARIOS] + (extra or [])
    return pa.Table.from_pylist(rows)


def settings(url: str, cache) -> judge.Settings:
    return judge.Settings(base_url=url, model="stand-in", timeout=0.5, max_retries=3,
                          rate=200.0, concurrency=4, cache=cache, backoff=0.01,
                          price_in=1.0, price_out=2.0)


def test_judge_labels_faults_and_cache(tmp_path) -> None:
    unavailable = {"answer_id": "a", "claim_id": "c-gone", "citation_id": "t", "engine": "e",
                   "domain": "d", "claim_text": "gone", "passage_text": None,
                   "page_reason": "http_404", "n_unresolved": 1, "capture_time": None}
    with JudgeStandIn(policy) as server:
        grader = judge.LLMGrader(BOOK, settings(server.base_url, tmp_path / "cache"))
        table = grader.grade(items([unavailable]))
        asked_first = server.requests
        rows = {r["claim_id"][2:]: r for r in table.to_pylist()}

        assert rows["ok"]["verdict"] == "fully_supported"
        assert rows["ok"]["confidence"] == 0.93
        assert (rows["ok"]["input_tokens"], rows["ok"]["output_tokens"]) == (120, 12)
        assert rows["ok"]["attempts"] == 1 and rows["ok"]["grader_digest"] == grader.digest()
        assert rows["unsupported"]["verdict"] == "unsupported"
        assert (rows["rate_limited"]["verdict"], rows["rate_limited"]["attempts"]) == \
            ("partially_supported", 2)
        assert (rows["server_error"]["verdict"], rows["server_error"]["attempts"]) == \
            ("contradicted", 3)
        assert (rows["slow"]["verdict"], rows["slow"]["attempts"]) == ("fully_supported", 2)
        # rejections are never labels: unresolved with the reason, after the bounded retries
        for name, reason, words in (
                ("malformed", "reply_rejected", "not one JSON object"),
                ("outside_set", "reply_rejected", "label 'supported' is not one of"),
                ("fenced", "reply_rejected", "not one JSON object"),
                ("always_500", "endpoint_failed", "HTTP 500"),
                ("bad_request", "endpoint_failed", "HTTP 400")):
            r = rows[name]
            assert (r["verdict"], r["reason"]) == ("unresolved", reason), name
            assert words in r["detail"], (name, r["detail"])
            assert r["confidence"] is None
        assert rows["malformed"]["attempts"] == 4  # 1 + max_retries
        assert rows["bad_request"]["attempts"] == 1  # a client error is not retried
        # an unavailable page is not sent
        assert (rows["gone"]["verdict"], rows["gone"]["reason"]) == ("unresolved", "http_404")
        assert server.asked["gone"] == 0
        acct = grader.accounting.as_dict(grader.settings)
        assert acct["requests"] == asked_first
        assert acct["rejected"] == 4 + 4 + 4 and acct["failed"] == 2
        # tokens of every reply received: 5 accepted, and 2 × 4 well-formed rejected ones
        assert acct["input_tokens"] == 120 * 13 and acct["output_tokens"] == 12 * 13
        assert acct["cost"] == pytest.approx((120 * 13 * 1.0 + 12 * 13 * 2.0) / 1e6)

        # a rerun reads the cache: only the unanswered pairs are asked again, same bytes
        again = judge.LLMGrader(BOOK, settings(server.base_url, tmp_path / "cache"))
        second = again.grade(items([unavailable]))
        assert again.accounting.cache_hits == 5
        labelled = [r for r in second.to_pylist() if r["reason"] is None]
        assert all(r["attempts"] == 0 for r in labelled)
        keep = [i for i, r in enumerate(table.to_pylist()) if r["reason"] is None]
        a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
        pq.write_table(table.take(keep).drop_columns(["attempts"]), a)
        pq.write_table(second.take(keep).drop_columns(["attempts"]), b)
        assert a.read_bytes() == b.read_bytes()


def test_parse_reply_is_strict() -> None:
    from citeaudit.demo_corpus.judge_standin import completion

    assert judge.parse_reply(completion('{"label": "unsupported", "confidence": 0}'))[
        "label"] == "unsupported"
    for content, words in (('{"label": "unsupported"}', "confidence None"),
                           ('{"label": "unsupported", "confidence": 2}', "confidence 2"),
                           ('{"label": "unsupported", "confidence": 1, "why": 1}',
                            "unexpected key(s) why"),
                           ('["unsupported"]', "not an object")):
        with pytest.raises(judge.Rejected, match=words.replace("(", r"\(").replace(")", r"\)")):
            judge.parse_reply(completion(content))
    with pytest.raises(judge.Rejected, match="not JSON"):
        judge.parse_reply(b"<html>")


def test_off_unless_configured_and_config_errors() -> None:
    assert judge.settings_from_env({}) is None
    assert [g.name for g in graders.graders(BOOK, None, {})] == ["locator"]
    with pytest.raises(judge.JudgeConfigError, match="CITEAUDIT_JUDGE_MODEL is not set"):
        judge.settings_from_env({"CITEAUDIT_JUDGE_BASE_URL": "http://127.0.0.1:1/v1"})
    with pytest.raises(judge.JudgeConfigError, match="CITEAUDIT_JUDGE_RATE='x'"):
        judge.settings_from_env({"CITEAUDIT_JUDGE_BASE_URL": "http://127.0.0.1:1/v1",
                                 "CITEAUDIT_JUDGE_MODEL": "m", "CITEAUDIT_JUDGE_RATE": "x"})
    on = graders.graders(BOOK, None, {"CITEAUDIT_JUDGE_BASE_URL": "http://127.0.0.1:1/v1",
                                      "CITEAUDIT_JUDGE_MODEL": "m"})
    assert [g.name for g in on] == ["locator", "llm"]
    # the prompt is part of the digest: a new prompt (a new codebook) is a new grader digest
    other = validate({"version": "t2", "label_maps": {"s": {"x": "unresolved"}},
                      "source_roles": {}, "priority_weights": {"w": 1.0},
                      "policy": {"contextualize_above": 0.5},
                      "graders": {"judge_prompt": "Say a label."}}, "(test)")
    s = judge.settings_from_env({"CITEAUDIT_JUDGE_BASE_URL": "http://127.0.0.1:1/v1",
                                 "CITEAUDIT_JUDGE_MODEL": "m"})
    assert judge.LLMGrader(BOOK, s).digest() != judge.LLMGrader(other, s).digest()


@pytest.mark.parametrize(("section", "words"), [
    ({"primary": "oracle"}, "graders.primary: 'oracle' is not a grader"),
    ({"judge_prompt": ""}, "graders.judge_prompt: expected a non-empty text"),
    ({"locator_fail": 0.5, "locator_pass": 0.3}, "graders.locator_fail: 0.5 is above"),
    ({"temperature": 1}, "temperature"),
])
def test_codebook_graders_section_fails_closed(section: dict, words: str) -> None:
    from citeaudit.codebook import CodebookError

    with pytest.raises(CodebookError, match=words.replace("(", r"\(")):
        validate({"version": "t", "label_maps": {"s": {"x": "unresolved"}},
                  "source_roles": {}, "priority_weights": {"w": 1.0},
                  "policy": {"contextualize_above": 0.5}, "graders": section}, "(test)")


def test_one_request_asked_once_the_same_label_on_a_rerun(tmp_path) -> None:
    """Pairs whose requests are identical (the same claim text and passage, other citations)
    are asked once and get the same label, so a rerun from the cache labels them as the first
    run did; the server sees each pair's id in the header, not in the request."""
    seen: list[str | None] = []

    def by_pair(claim: str, passage: str, n: int, pair: str | None) -> Reply:
        seen.append(pair)
        return Reply(label="fully_supported" if pair and pair.endswith("/t0")
                     else "unsupported", delay=0.2)

    rows = [{"answer_id": "a", "claim_id": "c-same", "citation_id": f"t{i}", "engine": "e",
             "domain": "d", "claim_text": "same claim", "passage_text": "same passage",
             "page_reason": None, "n_unresolved": 0, "capture_time": None} for i in range(6)]
    with JudgeStandIn(by_pair) as server:
        first = judge.LLMGrader(BOOK, settings(server.base_url, tmp_path / "cache"))
        labels = first.grade(pa.Table.from_pylist(rows)).column("verdict").to_pylist()
        again = judge.LLMGrader(BOOK, settings(server.base_url, tmp_path / "cache"))
        rerun = again.grade(pa.Table.from_pylist(rows)).column("verdict").to_pylist()
    assert len(seen) == 1 and seen[0].startswith("c-same/t")
    assert len(set(labels)) == 1 and labels == rerun
    assert first.accounting.cache_hits == 5 and again.accounting.cache_hits == 6
