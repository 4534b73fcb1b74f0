"""Fixture web archives for the archive-lookup tests: WARCs written with warcio (a real pywb
collection serves them), and a loopback stub speaking the Wayback Machine's CDX and
availability JSON shapes."""

from __future__ import annotations

import datetime as dt
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import BytesIO
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

REF = dt.datetime(2023, 3, 2, 12, 0, tzinfo=dt.UTC)


def at(hours: float) -> dt.datetime:
    """The reference time plus ``hours``."""
    return REF + dt.timedelta(hours=hours)


# (url, hours from REF, status, body): what the fixture archive holds
HOLDINGS = [
    ("http://site.test/both", -6, 200, b"<html><p>before the reference time</p></html>"),
    ("http://site.test/both", 2, 200, b"<html><p>after, but closer</p></html>"),
    ("http://site.test/after", -30, 200, b"<html><p>too early, outside the window</p></html>"),
    ("http://site.test/after", 3, 200, b"<html><p>only after</p></html>"),
    ("http://site.test/gone", -1, 404, b"<html><p>Not Found</p></html>"),
    ("http://site.test/far", -72, 200, b"<html><p>three days early</p></html>"),
    ("http://site.test/old", -2, 301, b"moved"),
    ("http://site.test/new", -3, 200, b"<html><p>the redirect's target</p></html>"),
]
LOCATIONS = {"http://site.test/old": "/new"}


def write_warc(path: Path, holdings=HOLDINGS) -> Path:
    """A WARC/1.1 of ``holdings``, one response record each."""
    with path.open("wb") as fh:
        w = WARCWriter(fh, gzip=True, warc_version="WARC/1.1")
        for url, hours, status, body in holdings:
            reason = {200: "OK", 404: "Not Found", 301: "Moved Permanently",
                      500: "Internal Server Error", 503: "Service Unavailable"}[status]
            headers = [("Content-Type", "text/html; charset=utf-8"),
                       ("Content-Length", str(len(body)))]
            if url in LOCATIONS:
                headers.append(("Location", LOCATIONS[url]))
            http = StatusAndHeaders(f"{status} {reason}", headers, protocol="HTTP/1.1")
            date = at(hours).strftime("%Y-%m-%dT%H:%M:%SZ")
            w.write_record(w.create_warc_record(url, "response", payload=BytesIO(body),
                                                http_headers=http,
                                                warc_headers_dict={"WARC-Date": date}))
    return path


class WaybackStub:
    """A loopback server answering like the Wayback Machine: ``/cdx/search/cdx`` (JSON rows,
    the first naming the fields), ``/wayback/available`` and ``/web/<ts>id_/<url>``.
    Every request path is kept in ``requests``."""

    def __init__(self, holdings=HOLDINGS, replay_status: dict[str, int] | None = None,
                 snapshot_base: str | None = None) -> None:
        self.holdings = holdings
        # url -> the status the replay answers (pywb's raw mode replays an archived 5xx as
        # that 5xx; a broken archive answers 5xx for anything)
        self.replay_status = replay_status or {}
        # where the availability API says the snapshot is (default: this stub)
        self.snapshot_base = snapshot_base
        self.requests: list[str] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                stub.requests.append(self.path)
                parts = urlsplit(self.path)
                q = {k: v[0] for k, v in parse_qs(parts.query).items()}
                if parts.path == "/cdx/search/cdx":
                    return self._json(stub.cdx(q))
                if parts.path == "/wayback/available":
                    return self._json(stub.available(q))
                if parts.path.startswith("/web/"):
                    return self._replay(self.path[len("/web/"):])
                self.send_error(404)

            def _json(self, doc) -> None:
                body = json.dumps(doc).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _replay(self, rest: str) -> None:
                ts, _, url = rest.partition("/")
                for u, hours, _status, body in stub.holdings:
                    if u == url and at(hours).strftime("%Y%m%d%H%M%S") + "id_" == ts:
                        # as pywb can, the replay answers 200 whatever status was archived
                        self.send_response(stub.replay_status.get(u, 200))
                        self.send_header("Content-Type", "text/html; charset=utf-8")
                        self.send_header("Content-Length", str(len(body)))
                        self.end_headers()
                        self.wfile.write(body)
                        return
                self.send_error(404)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def _rows(self, url: str):
        return [(at(h).strftime("%Y%m%d%H%M%S"), u, s) for u, h, s, _b in self.holdings
                if u == url]

    def cdx(self, q: dict) -> list:
        rows = [r for r in self._rows(q.get("url", ""))
                if q.get("from", "0") <= r[0] <= q.get("to", "9" * 14)]
        if not rows:
            return []
        head = ["urlkey", "timestamp", "original", "mimetype", "statuscode", "digest", "length"]
        return [head] + [["x", ts, u, "text/html", str(s), "D", "1"] for ts, u, s in rows]

    def available(self, q: dict) -> dict:
        want = q.get("timestamp", "")
        rows = self._rows(q.get("url", ""))
        if not rows:
            return {"url": q.get("url"), "archived_snapshots": {}}
        ts, u, s = min(rows, key=lambda r: abs(int(r[0]) - int(want.ljust(14, "0"))))
        return {"url": q.get("url"), "archived_snapshots": {"closest": {
            "status": str(s), "available": True, "timestamp": ts,
            "url": f"{self.snapshot_base or self.url}/web/{ts}/{u}"}}}

    def __enter__(self) -> WaybackStub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
