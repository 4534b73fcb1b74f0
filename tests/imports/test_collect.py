"""`citeaudit collect` for every engine through its official SDK, pointed at a loopback HTTP
server (127.0.0.1, free port) that replays the recorded responses of
../shared/corpora/answers/engines: never the vendors, dummy keys. A query the server fails with
400 is logged with its status and the panel goes on; a 503 is retried by the SDK."""

from __future__ import annotations

import importlib.util
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from citeaudit import cli
from citeaudit.imports.panels import read_panel

# The SDKs are looked for, not imported, when the tests are collected: importing them took
# about 2 s in every pytest worker, most of which never runs these tests.
MISSING_SDKS = [name for name in ("openai", "anthropic", "google.genai")
                if importlib.util.find_spec(name) is None]
pytestmark = pytest.mark.skipif(bool(MISSING_SDKS),
                                reason=f"engine SDKs not installed: {MISSING_SDKS}")

REPLAY = {
    "openai": ("/v1/responses", "openai-responses/vercel-ai__openai-web-search-tool.1.json"),
    "perplexity": ("/chat/completions",
                   "perplexity/ruby_llm__perplexity-sonar-search-result-citations.json"),
    "anthropic": ("/v1/messages", "anthropic/vercel-ai__anthropic-web-search-tool.1.json"),
    "gemini": (":generateContent", "gemini/pydantic-ai__gemini-2_5-pro-web-search-i0.json"),
}
PANEL = ['{"prompt_text": "What is new in tech today?", "prompt_id": "1"}',
         '{"prompt_text": "RETRY once, then answer", "prompt_id": "2"}',
         '{"prompt_text": "FAIL this one", "prompt_id": "3"}']


@pytest.fixture()
def replay(corpora: Path):
    root = corpora / "answers" / "engines"
    if not root.is_dir():
        pytest.skip(f"{root} is absent")
    bodies = {path: (root / f).read_bytes() for path, f in REPLAY.values()}
    seen: list[tuple[str, str]] = []
    retried: set[str] = set()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            request = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
            seen.append((self.path, request))
            key = next((k for k in bodies if self.path.split("?")[0].endswith(k)), None)
            if key is None or "FAIL" in request:
                status, body = (404 if key is None else 400), b'{"error": {"message": "no"}}'
            elif "RETRY" in request and self.path not in retried:
                retried.add(self.path)
                status, body = 503, b'{"error": {"message": "busy"}}'
            else:
                status, body = 200, bodies[key]
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen, bodies
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.mark.parametrize("engine", sorted(REPLAY))
def test_collect_replayed_panel(engine, replay, tmp_path, monkeypatch, capsys) -> None:
    base, seen, bodies = replay
    for var in ("OPENAI_API_KEY", "GEMINI_API_KEY", "ANTHROPIC_API_KEY", "PERPLEXITY_API_KEY"):
        monkeypatch.setenv(var, "dummy-key")
    panel = tmp_path / "seedpanel.jsonl"
    panel.write_text("\n".join(PANEL) + "\n", encoding="utf-8")
    out = tmp_path / "raw"
    url = base + "/v1" if engine == "openai" else base
    assert cli.main(["collect", "--engine", engine, "--queries", str(panel), "--out", str(out),
                     "--base-url", url, "--retries", "2", "--concurrency", "2"]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[0])
    assert (summary["queries"], summary["answers"], summary["errors"]) == (3, 2, 1)
    assert all(s == "/v1/responses" for s, _ in seen) if engine == "openai" else True
    sent = [json.loads(r) for _, r in seen]
    if engine != "perplexity":  # Sonar always searches; the others are asked to
        assert any("web_search" in json.dumps(r) or "googleSearch" in json.dumps(r)
                   for r in sent)
    assert len(seen) == 4  # one 503 retried
    [kept_dir] = (out / "responses" / engine).glob("*/seedpanel")
    _, recorded = REPLAY[engine]
    for f in kept_dir.glob("*.json"):
        assert f.read_bytes() == bodies[REPLAY[engine][0]]
    [errors] = (out / "responses" / engine).glob("*/seedpanel.errors.jsonl")
    [err] = [json.loads(x) for x in errors.read_text().splitlines()]
    assert (err["query_id"], err["status"]) == ("seedpanel-3", 400)
    [answers] = (out / "answers").glob(f"*/{engine}-{engine}-seedpanel-*.jsonl")
    rows = [json.loads(x) for x in answers.read_text(encoding="utf-8").splitlines()]
    assert sorted(r["query_id"] for r in rows) == ["seedpanel-1", "seedpanel-2"]
    assert {r["strata"]["domain"] for r in rows} == {"seedpanel"}
    assert rows[0]["query_text"] == "What is new in tech today?"
    assert sum(len(c["citations"]) for c in rows[0]["claims"]) > 0


def test_liu_panels_read_as_is(corpora: Path, tmp_path: Path) -> None:
    folder = corpora / "queries" / "liu-verifiability"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    for f in sorted(folder.glob("*.jsonl")):
        lines = [json.loads(x) for x in f.read_text(encoding="utf-8").splitlines() if x.strip()]
        queries = read_panel(f)
        assert [q.query_text for q in queries] == [x.get("query") or x["prompt_text"]
                                                   for x in lines]
        assert {q.stratum for q in queries} == {f.stem}
        assert len({q.query_id for q in queries}) == len(queries)
    plain = tmp_path / "mine.txt"
    plain.write_text("Is tea healthy?\n\nIs tea healthy?\nWho won?\n", encoding="utf-8")
    ids = [q.query_id for q in read_panel(plain)]
    assert len(ids) == 3 and ids[1] == ids[0] + "-2"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "ok"}\n{"nope": 1}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.jsonl:2: no query field"):
        read_panel(bad)
