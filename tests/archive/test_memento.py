"""A Memento TimeGate (RFC 7089) as a public-archive kind, against a loopback TimeGate written
here (real HTTP): ``Accept-Datetime`` sent, the 302 to the memento followed, the memento fetched
raw (``id_``), its ``Memento-Datetime`` and ``Link`` read; an archived 404 stays a 404, an
archived redirect is looked up again, a memento outside the window and a TimeGate's 404 are
``archive_no_capture``, an answer without ``Memento-Datetime`` and a TimeGate that is down are
``archive_error`` (the citation stays unresolved), and the no-capture cache holds."""

from __future__ import annotations

import datetime as dt
import email.utils
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow as pa

from citeaudit.archive.capture import archive_date, fetched_files, file_origin
from citeaudit.archive.index import index_paths
from citeaudit.archive.lookup import free_port, link_relations, parse_http_datetime
from citeaudit.config import ArchiveSettings, FetchSettings
from tests.archive.archive_fixtures import HOLDINGS, LOCATIONS, REF, at

DAY = "2023-03-02"
NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)
TS = pa.timestamp("us", tz="UTC")
URLS = ["http://site.test/both", "http://site.test/after", "http://site.test/gone",
        "http://site.test/missing", "http://site.test/far", "http://site.test/old",
        "http://site.test/nomemento"]


def _ts(when: dt.datetime) -> str:
    return when.strftime("%Y%m%d%H%M%S")


class TimeGate:
    """``/tg/<URI-R>``: 302 to the memento closest to ``Accept-Datetime`` (400 without it, 404
    when none); ``/web/<ts>id_/<URI-R>``: the memento, with the archived status,
    ``Memento-Datetime`` and ``Link``. ``/tg/http://site.test/nomemento`` redirects to a page
    that is not a memento."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str | None]] = []
        gate = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _send(self, status: int, headers: dict[str, str], body: bytes = b"") -> None:
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                accept = self.headers.get("Accept-Datetime")
                gate.requests.append((self.path, accept))
                if self.path.startswith("/tg/"):
                    return self._timegate(self.path[4:], accept)
                if self.path.startswith("/web/"):
                    return self._memento(self.path[5:])
                if self.path == "/plain":
                    return self._send(200, {"Content-Type": "text/html"}, b"<p>no memento</p>")
                self._send(404, {})

            def _timegate(self, urir: str, accept: str | None) -> None:
                if urir.endswith("/nomemento"):
                    return self._send(302, {"Location": "/plain", "Vary": "accept-datetime"})
                want = parse_http_datetime(accept)
                if want is None:
                    return self._send(400, {})
                held = [(at(h), s) for u, h, s, _ in HOLDINGS if u == urir]
                if not held:
                    return self._send(404, {"Vary": "accept-datetime"})
                when = min(held, key=lambda x: abs(x[0] - want))[0]
                self._send(302, {
                    "Location": f"/web/{_ts(when)}/{urir}", "Vary": "accept-datetime",
                    "Link": f'<{urir}>; rel="original", <{gate.url}/timemap/{urir}>; '
                            f'rel="timemap"; type="application/link-format"'})

            def _memento(self, rest: str) -> None:
                ts, _, urir = rest.partition("/")
                if not ts.endswith("id_"):  # a rewritten replay: the test wants the raw bytes
                    return self._send(500, {})
                for u, h, status, body in HOLDINGS:
                    if u == urir and _ts(at(h)) == ts[:-3]:
                        headers = {"Content-Type": "text/html; charset=utf-8",
                                   "Memento-Datetime": email.utils.format_datetime(
                                       at(h), usegmt=True),
                                   "Link": f'<{urir}>; rel="original"'}
                        if u in LOCATIONS:
                            headers["Location"] = LOCATIONS[u]
                        return self._send(status, headers, body)
                self._send(404, {})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> TimeGate:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def _run(raw: Path, archive: ArchiveSettings, urls=URLS) -> dict[str, list[dict]]:
    cit = pa.table({"answer_id": ["a"] * len(urls), "url": urls,
                    "retrieved_at": pa.array([REF] * len(urls), TS)})
    ans = pa.table({"answer_id": ["a"], "observed_at": pa.array([REF], TS)})
    settings = FetchSettings(contact="ops@example.org", per_host_delay_seconds=0.0,
                             read_timeout_seconds=5.0, total_timeout_seconds=10.0,
                             retry_backoff_seconds=0.01, max_retries=1)
    result = archive_date(raw, DAY, cit, ans, settings, now=NOW, archives=(archive,),
                          live=False, sleep=lambda s: None)
    out: dict[str, list[dict]] = {}
    for r in result.log.to_pylist():
        out.setdefault(r["cited_url"], []).append(r)
    return out


def test_a_memento_timegate_is_asked_and_its_mementos_kept(tmp_path: Path) -> None:
    with TimeGate() as gate:
        log = _run(tmp_path, ArchiveSettings("mg", "memento", f"{gate.url}/tg"))
        again = _run(tmp_path, ArchiveSettings("mg", "memento", f"{gate.url}/tg"),
                     ["http://site.test/missing"])
    files = fetched_files(tmp_path, DAY)
    caps = {r["target_uri"]: r for r in index_paths(
        [(f, f.relative_to(tmp_path).as_posix()) for f in files], workers=1).to_pylist()
        if r["record_type"] == "response"}
    # the TimeGate's choice (the closest memento, here after) inside the window, raw bytes
    assert caps["http://site.test/both"]["capture_time"] == at(2)
    assert caps["http://site.test/after"]["capture_time"] == at(3)
    assert caps["http://site.test/gone"]["http_status"] == 404   # the archived status
    # an archived redirect: the target asked at the TimeGate again
    assert caps["http://site.test/old"]["http_status"] == 301
    assert caps["http://site.test/new"]["capture_time"] == at(-3)
    assert {file_origin(c["file"]) for c in caps.values()} == {"archive:mg"}
    outcome = {u: rows[-1]["outcome"] for u, rows in log.items()}
    assert outcome["http://site.test/missing"] == "archive_no_capture"   # TimeGate 404
    assert outcome["http://site.test/far"] == "archive_no_capture"       # 72 h early
    assert "outside" in log["http://site.test/far"][-1]["detail"]
    assert outcome["http://site.test/nomemento"] == "archive_error"      # no Memento-Datetime
    assert "Memento-Datetime" in log["http://site.test/nomemento"][-1]["detail"]
    assert "http://site.test/nomemento" not in caps
    fetched = log["http://site.test/both"][-1]
    assert fetched["outcome"] == "archive_fetched" and "Link original" in fetched["detail"]
    # Accept-Datetime went with every TimeGate question: the reference time, RFC 1123
    tg = [a for p, a in gate.requests if p.startswith("/tg/http://site.test/both")]
    assert tg == ["Thu, 02 Mar 2023 12:00:00 GMT"]
    assert all("id_/" in p for p, _ in gate.requests if p.startswith("/web/"))
    # the same question answered "no capture" is not asked again within the cache days
    assert [r["outcome"] for r in again["http://site.test/missing"]] == [
        "archive_no_capture_cached"]


def test_a_timegate_that_is_down_leaves_the_page_unresolved(tmp_path: Path) -> None:
    down = ArchiveSettings("mg", "memento", f"http://127.0.0.1:{free_port()}/tg")
    log = _run(tmp_path, down, ["http://site.test/both"])
    assert [r["outcome"] for r in log["http://site.test/both"]] == ["archive_error"]
    assert fetched_files(tmp_path, DAY) == []


def test_link_header_relations() -> None:
    header = ('<http://a.test/>; rel="original", <http://tg/timemap/http://a.test/>; '
              'rel="timemap"; type="application/link-format", '
              '<http://tg/web/2023/http://a.test/>; rel="first memento"; '
              'datetime="Thu, 02 Mar 2023 12:00:00 GMT"')
    rels = link_relations(header)
    assert rels["original"] == "http://a.test/"
    assert rels["first"] == rels["memento"] == "http://tg/web/2023/http://a.test/"
    assert parse_http_datetime("Thu, 02 Mar 2023 12:00:00 GMT") == REF
    assert parse_http_datetime("yesterday") is None
