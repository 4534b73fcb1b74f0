"""Registry replies are untrusted: a body nested 100,000 levels deep, one trickled a byte at a
time, one larger than the cap. Each ends a lookup as an error or ``invalid`` fetch and an
``unresolved`` verdict with a reason; none raises, none holds the step past its deadline.
Real HTTP against a loopback server, through the real Crossref and OpenAlex clients."""

from __future__ import annotations

import resource
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from citeaudit.scholarly import clients, compare
from citeaudit.scholarly.transport import RegistrySession

DOI = "10.7554/elife.01567"
TH = compare.Thresholds(title_similarity=90, search_similarity=85, year_tolerance=1)
DEEP = b'{"status": "ok", "message": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"


class Hostile(BaseHTTPRequestHandler):
    mode = "deep"

    def do_GET(self) -> None:  # noqa: N802
        if self.mode == "deep":
            body = DEEP
        elif self.mode == "trickle":
            body = b'{"message": {}}' + b" " * 2000
        else:  # "huge": 64 MB of JSON-ish padding, sent as fast as the socket takes it
            body = b""
        size = 64 * 1024 * 1024 if self.mode == "huge" else len(body)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(size))
        self.end_headers()
        try:
            if self.mode == "deep":
                self.wfile.write(body)
            elif self.mode == "trickle":
                for i in range(len(body)):
                    self.wfile.write(body[i:i + 1])
                    self.wfile.flush()
                    time.sleep(0.05)
            else:
                block = b" " * (1024 * 1024)
                for _ in range(64):
                    self.wfile.write(block)
        except OSError:
            pass  # the client gave up, as it should

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, type[Hostile]]]:
    handler = type("H", (Hostile,), {})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    t = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    t.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", handler
    httpd.shutdown()
    httpd.server_close()


def _clients(url: str, **kw):
    kw = dict(timeout=2.0, max_retries=0, per_second=500, body_deadline=1.0, **kw)
    cr = clients.CrossrefClient(RegistrySession(clients.CROSSREF_ORIGIN, url, **kw), timeout=2)
    oa = clients.OpenAlexClient(RegistrySession(clients.OPENALEX_ORIGIN, url, **kw))
    return cr, oa


def _verdict(cr, oa) -> tuple[compare.Verdict, tuple]:
    fetches = cr.work(DOI), oa.work(DOI)
    lookups = tuple(clients.parse_lookup(f) for f in fetches)
    return compare.decide(compare.Cited("T", ("A B",), 2014, None), DOI, *lookups, TH), fetches


def test_deeply_nested_registry_json_is_unresolved(server) -> None:
    url, handler = server
    handler.mode = "deep"
    v, fetches = _verdict(*_clients(url))
    assert v.verdict == "unresolved"
    assert [f.outcome for f in fetches] == ["invalid", "invalid"]
    assert all(f.detail == "invalid_body:JsonTooDeep" for f in fetches)


def test_trickled_registry_body_ends_at_the_deadline(server) -> None:
    url, handler = server
    handler.mode = "trickle"  # 2 KB at 20 bytes a second: 100 s without a body deadline
    cr, oa = _clients(url)
    v, fetches = _verdict(cr, oa)
    assert v.verdict == "unresolved"
    assert [f.outcome for f in fetches] == ["error", "error"]
    assert all(f.detail.startswith("timeout") for f in fetches), [f.detail for f in fetches]


def test_registry_body_over_the_cap_is_refused_in_bounded_memory(server) -> None:
    url, handler = server
    handler.mode = "huge"
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    v, fetches = _verdict(*_clients(url, max_body_bytes=4 * 1024 * 1024))
    assert v.verdict == "unresolved"
    assert [f.outcome for f in fetches] == ["error", "error"]
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 40_000  # KiB
