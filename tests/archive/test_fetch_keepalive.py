"""Kept-alive connections, the shared deadline thread, the WARC digests computed by the writer
and the capture process without pandas: against a real keep-alive server on 127.0.0.1."""

from __future__ import annotations

import datetime as dt
import http.server
import socket
import subprocess
import sys
import threading
import time
from io import BytesIO
from pathlib import Path
from urllib.parse import urlsplit

import pyarrow as pa
from warcio.archiveiterator import ArchiveIterator

from citeaudit.archive.capture import archive_date, http_get
from citeaudit.archive.capture.fetcher import ConnectionPool
from citeaudit.archive.capture.scope import Scope
from citeaudit.archive.capture.warc_writer import FetchWarcWriter, HttpExchange, sha1_digest
from citeaudit.config import FetchSettings

ROOT = Path(__file__).resolve().parents[2]


class KeepAliveSite:
    """HTTP/1.1 with persistent connections; logs (client port, path) per request. Paths
    ``/drop...``: the second request on a connection is read and the connection closed with
    no answer (a server closing an idle connection just as the next request arrives);
    ``/never``: every request is closed with no answer."""

    def __init__(self) -> None:
        self.log: list[tuple[int, str]] = []
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                path = urlsplit(self.path).path
                served = [p for port, p in site.log if port == self.client_address[1]]
                site.log.append((self.client_address[1], path))
                if (path.startswith("/drop") and served) or path == "/never":
                    self.close_connection = True
                    return
                body = (b"User-agent: *\nDisallow:\n" if path == "/robots.txt"
                        else f"<html><p>{path}</p></html>".encode())
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.server.server_port}"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,),
                                        daemon=True)

    def __enter__(self) -> KeepAliveSite:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def get(site: KeepAliveSite, path: str, pool: ConnectionPool | None, **kw):
    return http_get(f"http://k.test{path}", via=site.origin, user_agent="t", connect_timeout=2,
                    read_timeout=2, total_timeout=3, max_body=10_000, pool=pool,
                    scope=Scope(allow_private_networks=True), **kw)


def test_one_connection_serves_a_hosts_pages_and_the_warc_stays_valid(tmp_path):
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    urls = [f"http://k.test/page{i}" for i in range(6)]
    ts = pa.timestamp("us", tz="UTC")
    cit = pa.table({"answer_id": ["a"] * 6, "url": urls, "retrieved_at": pa.array([now] * 6, ts)})
    ans = pa.table({"answer_id": ["a"], "observed_at": pa.array([now], ts)})
    with KeepAliveSite() as site:
        s = FetchSettings(enabled=True, via=site.origin, contact="ops@example.org",
                          allow_private_networks=True, soft_404_probe=False,
                          per_host_delay_seconds=0.0)
        res = archive_date(tmp_path, now.date().isoformat(), cit, ans, s, now=now)
    assert res.log.column("outcome").to_pylist() == ["fetched"] * 7
    assert len(site.log) == 7  # robots.txt and six pages
    assert len({port for port, _ in site.log}) == 1  # all on one kept-alive connection
    seen = []
    for f in res.files:
        with open(f, "rb") as fh:
            for rec in ArchiveIterator(fh, check_digests="raise"):
                rec.content_stream().read()
                if rec.rec_type == "request":
                    head = rec.http_headers
                    assert head.get_header("Connection") is None  # HTTP/1.1: persistent
                    seen.append(rec.rec_headers.get_header("WARC-Target-URI"))
    assert sorted(seen) == sorted([*urls, "http://k.test/robots.txt"])


def test_a_kept_connection_closed_by_the_server_is_replaced_and_the_page_fetched():
    with KeepAliveSite() as site:
        pool = ConnectionPool()
        first = get(site, "/drop1", pool)
        second = get(site, "/drop2", pool)  # sent on the kept connection, dropped, sent again
        assert (first.outcome, second.outcome) == ("fetched", "fetched")
        assert second.exchange is not None
        assert second.exchange.body == b"<html><p>/drop2</p></html>"
        assert [p for _, p in site.log] == ["/drop1", "/drop2", "/drop2"]
        ports = [port for port, _ in site.log]
        assert ports[0] == ports[1] != ports[2]
        # sent again once at most, and only after a kept connection failed: on a new
        # connection no answer is the server's doing, reported as such
        site.log.clear()
        never = get(site, "/never", pool)
        assert [p for _, p in site.log] == ["/never", "/never"]  # kept, then new connection
        assert never.outcome == "connection_reset"
        site.log.clear()
        assert get(site, "/never", ConnectionPool()).outcome == "connection_reset"
        assert [p for _, p in site.log] == ["/never"]
        pool.close()


def test_a_connection_is_not_kept_after_a_cut_body_or_without_a_pool():
    with KeepAliveSite() as site:
        pool = ConnectionPool()
        assert get(site, "/page0", pool).outcome == "fetched"
        cut = http_get("http://k.test/page1", via=site.origin, user_agent="t",
                       connect_timeout=2, read_timeout=2, total_timeout=3, max_body=5,
                       pool=pool, scope=Scope(allow_private_networks=True))
        assert cut.outcome == "too_large"  # on the kept connection, which is then closed
        assert get(site, "/page2", pool).outcome == "fetched"
        ports = [port for port, _ in site.log]
        assert ports[0] == ports[1] != ports[2]
        closed = get(site, "/page3", None)
        assert closed.exchange is not None
        assert ("Connection", "close") in closed.exchange.request_headers
        pool.close()


def test_many_deadlines_share_one_thread_and_cancelled_ones_never_fire():
    from citeaudit.archive.capture import fetcher

    with KeepAliveSite() as site:
        pool = ConnectionPool()
        for i in range(30):
            assert get(site, f"/page{i}", pool).outcome == "fetched"
        assert pool.reused == 29
        assert [t.name for t in threading.enumerate()].count("fetch-deadlines") == 1
        # a deadline left armed fires on time; a cancelled one never does
        armed, cancelled = fetcher._Deadline(0.05), fetcher._Deadline(0.05)
        a, b = socket.socketpair()
        armed.arm(a)
        cancelled.arm(b)
        cancelled.cancel()
        time.sleep(0.3)
        assert armed.fired and not cancelled.fired
        a.close()
        b.close()
        pool.close()


def test_the_writers_digests_are_the_ones_warcio_checks(tmp_path):
    body = "<html><p>é</p></html>".encode()
    w = FetchWarcWriter(tmp_path, "2026-01-02", "2026-01-02", max_bytes=10**9, info={"a": "b"})
    ex = HttpExchange(url="http://k.test/p?q=é", request_line="GET /p HTTP/1.1",
                      request_headers=[("Host", "k.test")], status_line="200 OK",
                      response_headers=[("Content-Type", "text/html"), ("X-Name", "Zoë")],
                      protocol="HTTP/1.1", body=body, ip_address="127.0.0.1",
                      fetched_at=dt.datetime(2026, 1, 2, tzinfo=dt.UTC), truncated="length")
    w.write_exchange(ex)
    (path,) = w.close()
    with open(path, "rb") as fh:
        recs = [(r.rec_type, r.rec_headers, r.content_stream().read())
                for r in ArchiveIterator(fh, check_digests="raise")]
    assert [t for t, _, _ in recs] == ["warcinfo", "response", "request"]
    resp, req = recs[1][1], recs[2][1]
    assert resp.get_header("WARC-Payload-Digest") == sha1_digest(body)
    assert resp.get_header("WARC-Truncated") == "length"
    assert req.get_header("WARC-Payload-Digest") == sha1_digest(b"")
    assert req.get_header("WARC-Concurrent-To") == resp.get_header("WARC-Record-ID")
    names = [k for k, _ in resp.headers]
    assert names == ["WARC-Date", "WARC-IP-Address", "WARC-Truncated", "WARC-Type",
                     "WARC-Record-ID", "WARC-Target-URI", "WARC-Payload-Digest",
                     "WARC-Block-Digest", "Content-Type", "Content-Length"]
    assert BytesIO(recs[1][2]).read() == body


def test_a_capture_only_process_runs_without_pandas():
    code = (
        "import sys\n"
        "from citeaudit.archive.capture.fetch_log import lean_process\n"
        "assert lean_process()\n"
        "import duckdb, pyarrow as pa\n"
        "con = duckdb.connect()\n"
        "con.register('t', pa.table({'a': [1, 2]}))\n"
        "assert con.sql('SELECT sum(a) FROM t').fetchall() == [(3,)]\n"
        "assert 'pandas' not in sys.modules\n"
        "try:\n"
        "    import pandas  # noqa: F401\n"
        "except ModuleNotFoundError:\n"
        "    print('declined')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=120, check=True)
    assert out.stdout.strip() == "declined"
