"""A real threaded HTTP server on 127.0.0.1 for the fetch tests: it logs every request it
receives (Host, path, server-side time) and plays the behaviours a crawl must survive."""

from __future__ import annotations

import http.server
import socket
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

BIG = 300_000
SOFT_404 = (b"<html><head><title>Page not found | Soft Site</title></head><body><nav>"
            b"<a href='/'>Home</a></nav><h1>Page not found</h1><p>Sorry, we couldn't find "
            b"that page.</p></body></html>")
PAYWALLED = (b"<html><head><script type='application/ld+json'>{\"@type\": \"NewsArticle\", "
             b"\"isAccessibleForFree\": false}</script></head><body><h1>Budget</h1><p>The "
             b"council approved the budget.</p><p>Subscribe to continue reading.</p></body>"
             b"</html>")
CHALLENGE = (b"<html><head><title>Just a moment...</title></head><body><div id='cf-challenge'>"
             b"Checking your browser before accessing the site.</div><script src='/cdn-cgi/"
             b"challenge-platform/h/b/orchestrate/jsch/v1'></script></body></html>")


@dataclass
class SiteLog:
    requests: list[tuple[str, str, float]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    hits: dict[str, int] = field(default_factory=dict)

    def add(self, host: str, path: str) -> int:
        with self.lock:
            self.requests.append((host, path, time.monotonic()))
            self.hits[host + path] = self.hits.get(host + path, 0) + 1
            return self.hits[host + path]

    def paths(self, host: str | None = None) -> list[str]:
        with self.lock:
            return [p for h, p, _ in self.requests if host is None or h == host]


def _handler(log: SiteLog, slow_seconds: float):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # no ~40 ms delayed-ACK stall per answer

        def log_message(self, *args) -> None:
            pass

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None,
                  length: int | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body) if length is None else length))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: C901 - one branch per planted behaviour
            host = (self.headers.get("Host") or "").split(":")[0]
            path = self.path
            if not path.startswith("/"):  # absolute-form, as a client sends through --via
                parts = urlsplit(path)
                path = parts.path + (f"?{parts.query}" if parts.query else "")
            n = log.add(host, path)
            if path == "/robots.txt":
                if host.startswith("robots5xx"):
                    return self._send(503, b"down")
                if host.startswith("norobots"):
                    return self._send(404, b"none")
                return self._send(200, b"User-agent: *\nDisallow: /private\n")
            if path.startswith("/page"):
                return self._send(200, f"<html><p>{host}{path}</p></html>".encode())
            if path == "/same":
                return self._send(200, b"<html><p>always the same</p></html>")
            if path == "/busy":
                if n == 1:
                    return self._send(429, b"slow down", {"Retry-After": "1"})
                return self._send(200, b"<html>finally</html>")
            if path == "/always-busy":
                return self._send(503, b"down", {"Retry-After": "0"})
            if path.startswith("/hop"):
                k = int(path[4:] or 0)
                if k < 2:
                    return self._send(301, b"", {"Location": f"/hop{k + 1}"})
                return self._send(200, b"<html>arrived</html>")
            if path == "/loop-a":
                return self._send(302, b"", {"Location": "/loop-b"})
            if path == "/loop-b":
                return self._send(302, b"", {"Location": "http://" + host + "/loop-a"})
            if path == "/big":
                return self._send(200, b"x" * BIG)
            if path == "/slow":
                time.sleep(slow_seconds)
                return self._send(200, b"late")
            if path == "/lie":  # declares more than it sends, then closes
                self._send(200, b"short", length=1000)
                self.close_connection = True
                return None
            if path == "/endless":
                self.send_response(200)
                self.send_header("Content-Length", "100000000")
                self.end_headers()
                try:
                    for _ in range(400):
                        self.wfile.write(b"a" * 10)
                        self.wfile.flush()
                        time.sleep(0.01)
                except OSError:
                    pass
                return None
            if path == "/garbage":
                self.wfile.write(b"THIS IS NOT HTTP\r\n\r\n")
                self.close_connection = True
                return None
            if path == "/gone":
                return self._send(410, b"gone")
            if path == "/paywalled":
                return self._send(200, PAYWALLED)
            if path == "/challenge":
                return self._send(403, CHALLENGE)
            if host.startswith("soft"):  # a soft-404 site: any missing page answers 200
                return self._send(200, SOFT_404)
            return self._send(404, b"not found")

    return Handler


class FetchSite:
    """Start with ``with FetchSite() as site:``; ``site.origin`` is the ``--via`` origin."""

    def __init__(self, slow_seconds: float = 3.0) -> None:
        self.log = SiteLog()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                      _handler(self.log, slow_seconds))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def __enter__(self) -> FetchSite:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
