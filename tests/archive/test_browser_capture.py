"""Browser capture against a loopback site serving script-rendered pages.

A single-page application answers ``/article/1`` with a shell (an empty ``#root`` and a script);
the quote only appears once the script has fetched ``/api/article/1`` and rendered it. Through a
real ``citeaudit archive`` and the pipeline's stage functions (index, alignment, page texts, L1,
L2; no whole ``citeaudit run``):

- ``fetch.browser: never``: the static capture is a shell, so L1 says ``unresolved``
  (``script_shell``) and L2 ``unresolved``, never ``absent``;
- ``fetch.browser: auto``: the shell is rendered in headless Chromium, every sub-request fetched
  by the crawler and archived (request and response records with the real status), the DOM kept
  as a ``urn:rendered-dom:`` resource record, and the quote is ``located`` (``capture_fidelity``
  ``rendered``); a sub-request to a denied host and one to the cloud metadata address are
  refused and logged (the site never sees them); a page whose app script is refused is not
  rendered half-way (``render_incomplete``) and stays unresolved; a static page is not
  rendered at all; the L1 breakdown names the rendered pass ``pass_rendered``;
- ``never`` then ``auto`` on the same date: the second ``citeaudit archive`` renders the shell
  the first captured statically (not fetched again, a new record with its WARC-Date), and a
  third renders nothing more.

Skips, saying how to install it, when Debian's Chromium is absent.
"""

from __future__ import annotations

import datetime as dt
import http.server
import json
import threading
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from warcio.archiveiterator import ArchiveIterator

from citeaudit import cli, codebook, config, duck
from citeaudit.alignment import align, passages, payload_text, soft404
from citeaudit.archive.capture import find_chromium, read_logs
from citeaudit.archive.index import index_paths
from citeaudit.archive.index.schema import with_origin
from citeaudit.ingest.answers import answer_files, ingest_files

NOW = dt.datetime.now(dt.UTC).replace(microsecond=0)
DAY = NOW.date().isoformat()
QUOTE = "The council approved the harbour budget on Tuesday."
PLAIN = "The museum reopens in May after two years of repairs."

SHELL = (b"<!doctype html><html><head><title>News</title>"
         b"<script src='/static/app.js' defer></script></head><body>"
         b"<noscript>You need to enable JavaScript to run this app.</noscript>"
         b"<div id='root'></div>"
         b"<img src='http://evil.test/pixel.gif' alt=''>"
         b"<img src='http://169.254.169.254/latest/meta-data/x.png' alt=''>"
         b"</body></html>")
SHELL_REFUSED_APP = (b"<!doctype html><html><head><title>News</title>"
                     b"<script src='http://evil.test/app.js' defer></script></head><body>"
                     b"<div id='root'></div></body></html>")
APP_JS = (b"fetch('/api/article/1').then(r => r.json()).then(d => {"
          b" document.getElementById('root').innerHTML ="
          b" '<article><h1>' + d.title + '</h1><p>' + d.body + '</p></article>'; });")
API = json.dumps({"title": "Harbour budget", "body": f"Reporting from the hall. {QUOTE} "
                  "The vote was close."}).encode()
STATIC = f"<html><head><title>Museum</title></head><body><p>{PLAIN}</p></body></html>".encode()


class _Site:
    """A threaded loopback server; every request logged as (Host, path)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # no ~40 ms delayed-ACK stall per answer

            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                from urllib.parse import urlsplit

                host = (self.headers.get("Host") or "").split(":")[0]
                path = self.path if self.path.startswith("/") else urlsplit(self.path).path
                site.seen.append((host, path))
                pages = {"/robots.txt": ("text/plain", b"User-agent: *\nAllow: /\n"),
                         "/article/1": ("text/html; charset=utf-8", SHELL),
                         "/article/2": ("text/html; charset=utf-8", SHELL_REFUSED_APP),
                         "/static/app.js": ("application/javascript", APP_JS),
                         "/api/article/1": ("application/json", API),
                         "/plain": ("text/html; charset=utf-8", STATIC)}
                ctype, body = pages.get(path, ("text/plain", b"not found"))
                self.send_response(200 if path in pages else 404)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(body)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def __enter__(self) -> _Site:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def _raw(root: Path, browser: str, **fetch) -> Path:
    from citeaudit.demo_corpus.codebooks import write_codebooks

    raw = root / "raw"
    folder = raw / "answers" / DAY
    folder.mkdir(parents=True)
    cites = [("http://spa.test/article/1", QUOTE), ("http://spa.test/article/2", QUOTE),
             ("http://spa.test/plain", PLAIN)]
    answer = {
        "answer_id": "a1", "query_id": "q1", "query_text": "what did the council do?",
        "engine": "perplexity", "observed_at": NOW.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "answer_text": "The council approved it.",
        "strata": {"domain": "news", "risk_band": "low", "inclusion_prob": 1},
        "claims": [{"claim_id": "a1-k0", "span": [0, 24], "text": "The council approved it.",
                    "verification_worthy": True,
                    "citations": [{"citation_id": f"a1-x{i}", "url": u, "quote": q}
                                  for i, (u, q) in enumerate(cites)]}],
    }
    (folder / "web.jsonl").write_text(json.dumps(answer) + "\n", encoding="utf-8")
    write_codebooks(raw / "codebooks")
    (raw / config.CONFIG_FILE).write_text(yaml.safe_dump({"fetch": {
        "contact": "ops@example.org", "per_host_delay_seconds": 0.0, "browser": browser,
        "browser_timeout_seconds": 30, "deny_hosts": ["evil.test"], "soft_404_probe": False}
        | fetch}))
    return raw


def _archive_and_judge(root: Path, site: _Site, browser: str, **fetch) -> dict:
    """``citeaudit archive`` then the stage functions from the capture index to L2."""
    raw = _raw(root, browser, **fetch)
    assert cli.main(["archive", "--raw", str(raw), "--date", DAY, "--via", site.origin]) == 0
    return _judge(root, raw)


def _judge(root: Path, raw: Path) -> dict:
    """The stage functions from the capture index to L2 over what ``raw`` holds."""
    derived = root / "derived"
    ingested = ingest_files(answer_files(raw, DAY), raw)
    warcs = sorted(raw.glob("warc/*/*.warc.gz"))
    caps = with_origin(index_paths([(f, f.relative_to(raw).as_posix()) for f in warcs],
                                   workers=1), "fetched")
    out = derived / "captures" / f"crawl_date={DAY}"
    out.mkdir(parents=True)
    pq.write_table(caps, out / "data.parquet")
    aligned = align.align(ingested.citations, ingested.answers, derived,
                          codebook.load_version(raw, "v1"))
    texts = payload_text.extract_payloads(aligned, raw)
    checks = soft404.page_checks(aligned, texts, align.probes_for(aligned, raw))
    l1 = align.existence(aligned, checks)
    l2 = passages.check(ingested.citations, aligned, texts, existence=l1)
    return {"raw": raw, "log": read_logs(raw, DAY).to_pylist(), "warcs": warcs,
            "ingested": ingested, "l1_table": l1,
            "l1": {r["citation_id"]: r for r in l1.to_pylist()},
            "l2": {r["citation_id"]: r["verdict"] for r in l2.to_pylist()}}


@pytest.fixture(scope="module")
def chromium() -> str:
    exe = find_chromium(None)
    if exe is None:
        pytest.skip("headless Chromium not found: install Debian's package with `apt-get "
                    "update && apt-get install -y chromium` (.ci/run does this when it runs "
                    "as root), or point CITEAUDIT_CHROMIUM at a Chromium binary")
    pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    return exe


def test_a_static_shell_is_unresolved_never_absent(tmp_path: Path) -> None:
    with _Site() as site:
        got = _archive_and_judge(tmp_path, site, "never")
    assert (got["l1"]["a1-x0"]["verdict"], got["l1"]["a1-x0"]["reason"]) == (
        "unresolved", "script_shell")
    assert got["l1"]["a1-x0"]["capture_fidelity"] == "static"
    assert got["l2"]["a1-x0"] == "unresolved"      # not "absent": the shell is not the page
    assert got["l1"]["a1-x2"]["reason"] == "ok" and got["l2"]["a1-x2"] == "located"
    assert not [r for r in got["log"] if r["purpose"] in ("render", "subresource")]
    assert ("spa.test", "/static/app.js") not in site.seen


def test_without_a_browser_the_shell_stays_unresolved_and_says_why(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A configured Chromium that is not there: one ``browser_unavailable`` row per page to
    render naming the key, no other browser driven, the static shell unresolved; the archive
    succeeds and says so once."""
    missing = str(tmp_path / "no-such-chromium")
    with _Site() as site:
        got = _archive_and_judge(tmp_path, site, "auto", browser_executable=missing)
    err = capsys.readouterr().err
    assert "browser_unavailable 2" in err
    assert "2 page(s) not rendered, their static captures stand" in err
    renders = [r for r in got["log"] if r["purpose"] == "render"]
    assert {r["url"] for r in renders} == {"http://spa.test/article/1",
                                           "http://spa.test/article/2"}
    assert {r["outcome"] for r in renders} == {"browser_unavailable"}
    assert all("fetch.browser_executable" in r["detail"] for r in renders)
    assert got["l1"]["a1-x0"]["reason"] == "script_shell" and got["l2"]["a1-x0"] == "unresolved"
    assert ("spa.test", "/static/app.js") not in site.seen


def test_browser_auto_renders_the_shell_and_the_quote_is_located(tmp_path: Path,
                                                                  chromium: str) -> None:
    with _Site() as site:
        got = _archive_and_judge(tmp_path, site, "auto")
    l1, l2, log = got["l1"], got["l2"], got["log"]
    # the rendered page is read: the quote that only JavaScript puts there is found
    assert (l1["a1-x0"]["verdict"], l1["a1-x0"]["capture_fidelity"]) == ("pass", "rendered")
    assert l2["a1-x0"] == "located"
    # the app script was refused (denied host): no half-rendered page, the shell stays unread
    assert (l1["a1-x1"]["verdict"], l1["a1-x1"]["reason"]) == ("unresolved", "script_shell")
    assert l2["a1-x1"] == "unresolved"
    # a static page is not rendered under auto
    assert l1["a1-x2"]["capture_fidelity"] == "static" and l2["a1-x2"] == "located"
    # the L1 breakdown names the rendered pass apart; the rate counts it as any pass
    con = duck.connect()
    con.register("citations", got["ingested"].citations)
    con.register("answers", got["ingested"].answers)
    con.register("citation_existence", got["l1_table"])
    units = {r["unit_id"]: (r["y"], r["category"])
             for r in duck.query(con, "metrics/select_existence_units").to_pylist()}
    assert units == {"a1-x0": (1.0, "pass_rendered"), "a1-x1": (None, "unresolved_script_shell"),
                     "a1-x2": (1.0, "pass")}
    renders = {r["url"]: r for r in log if r["purpose"] == "render"}
    assert renders["http://spa.test/article/1"]["outcome"] == "rendered"
    assert renders["http://spa.test/article/1"]["record_type"] == "resource"
    assert renders["http://spa.test/article/2"]["outcome"] == "render_incomplete"
    assert "http://spa.test/plain" not in renders
    subs = {(r["url"], r["outcome"]) for r in log if r["purpose"] == "subresource"}
    assert ("http://spa.test/static/app.js", "fetched") in subs
    assert ("http://spa.test/api/article/1", "fetched") in subs
    assert ("http://evil.test/pixel.gif", "host_denied") in subs
    assert ("http://evil.test/app.js", "host_denied") in subs
    assert ("http://169.254.169.254/latest/meta-data/x.png", "private_address") in subs
    # refused sub-requests never left: the site saw no request for them
    assert not [p for h, p in site.seen if h in ("evil.test", "169.254.169.254")]
    # the document was not fetched twice: Chromium got the static capture's bytes
    assert site.seen.count(("spa.test", "/article/1")) == 1
    # every response the page loaded is in the WARC with its request; the DOM is its own record
    records = []
    for f in got["warcs"]:
        with open(f, "rb") as fh:
            for rec in ArchiveIterator(fh):
                records.append((rec.rec_type, rec.rec_headers.get_header("WARC-Target-URI"),
                                rec.http_headers.get_statuscode() if rec.http_headers and
                                rec.rec_type == "response" else None,
                                rec.content_stream().read()))
    kinds = {(t, u, s) for t, u, s, _ in records}
    assert ("response", "http://spa.test/api/article/1", "200") in kinds
    assert ("request", "http://spa.test/api/article/1", None) in kinds
    dom = [b for t, u, _, b in records
           if t == "resource" and u == "urn:rendered-dom:http://spa.test/article/1"]
    assert len(dom) == 1 and QUOTE.encode() in dom[0]
    assert not [u for _, u, _, _ in records if u and "evil.test" in u]


def _records(warcs: list[Path]) -> list[tuple[str, str | None, str | None, bytes]]:
    """(type, target URI, WARC-Date, payload) of every record."""
    out = []
    for f in warcs:
        with open(f, "rb") as fh:
            for rec in ArchiveIterator(fh):
                h = rec.rec_headers
                out.append((rec.rec_type, h.get_header("WARC-Target-URI"),
                            h.get_header("WARC-Date"), rec.content_stream().read()))
    return out


def test_a_shell_captured_before_the_browser_was_on_is_rendered_by_the_next_archive(
        tmp_path: Path, chromium: str) -> None:
    """``citeaudit archive`` with ``browser: never`` captures the shell statically; the same
    date archived again with ``auto`` skips the page (a recent capture) but renders that
    capture: the document is not fetched again, its sub-requests are, the rendered DOM is a
    new record with the first capture's WARC-Date (nothing rewritten), and the quote is
    ``located``. A third run renders nothing again (the failed render is not retried)."""
    import hashlib

    with _Site() as site:
        raw = _raw(tmp_path, "never")
        argv = ["archive", "--raw", str(raw), "--date", DAY, "--via", site.origin]
        assert cli.main(argv) == 0
        first = {f: hashlib.sha256(f.read_bytes()).hexdigest()
                 for f in raw.glob("warc/*/*.warc.gz")}
        shell_date = next(d for t, u, d, _ in _records(list(first))
                          if t == "response" and u == "http://spa.test/article/1")
        assert ("spa.test", "/static/app.js") not in site.seen
        cfg_path = raw / config.CONFIG_FILE
        cfg = yaml.safe_load(cfg_path.read_text())
        cfg["fetch"]["browser"] = "auto"
        cfg_path.write_text(yaml.safe_dump(cfg))
        assert cli.main(argv) == 0
        seen_after_second = list(site.seen)
        log_second = read_logs(raw, DAY).to_pylist()
        assert cli.main(argv) == 0
        log_third = read_logs(raw, DAY).to_pylist()
        seen_after_third = list(site.seen)
    # the earlier files are untouched; the rendered DOM is a new record in a new file
    assert {f: hashlib.sha256(f.read_bytes()).hexdigest() for f in first} == first
    warcs = sorted(raw.glob("warc/*/*.warc.gz"))
    new = [f for f in warcs if f not in first]
    dom = [(d, b) for t, u, d, b in _records(new)
           if t == "resource" and u == "urn:rendered-dom:http://spa.test/article/1"]
    assert len(dom) == 1 and dom[0][0] == shell_date and QUOTE.encode() in dom[0][1]
    # the page itself was fetched once (the first run); the script and its data the second
    assert seen_after_second.count(("spa.test", "/article/1")) == 1
    assert ("spa.test", "/static/app.js") in seen_after_second
    renders = {r["url"]: r for r in log_second if r["purpose"] == "render"}
    assert renders["http://spa.test/article/1"]["outcome"] == "rendered"
    assert "earlier crawl" in renders["http://spa.test/article/1"]["detail"]
    assert renders["http://spa.test/article/2"]["outcome"] == "render_incomplete"
    assert "http://spa.test/plain" not in renders  # not a shell: auto leaves it static
    skips = {r["url"] for r in log_second if r["outcome"] == "skipped_recent_capture"}
    assert {"http://spa.test/article/1", "http://spa.test/plain"} <= skips
    # a third run: nothing left to render, nothing asked of the site
    assert len([r for r in log_third if r["purpose"] == "render"]) == len(renders)
    assert seen_after_third == seen_after_second
    got = _judge(tmp_path, raw)
    assert (got["l1"]["a1-x0"]["verdict"], got["l1"]["a1-x0"]["capture_fidelity"]) == (
        "pass", "rendered")
    assert got["l2"]["a1-x0"] == "located"
    assert got["l1"]["a1-x1"]["reason"] == "script_shell" and got["l2"]["a1-x1"] == "unresolved"
