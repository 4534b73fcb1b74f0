"""The crawler cannot be turned on its owner: loopback, private and link-local addresses in any
spelling, redirects and robots.txt into them, odd ports and schemes are refused by default (the
loopback listener receives nothing) and fetched only with ``fetch.allow_private_networks``;
a compression bomb stops at ``max_body_bytes`` decoded; a header trickle stops at the total
timeout; credentials never reach the log or the WARC. Every request goes to 127.0.0.1."""

from __future__ import annotations

import datetime as dt
import gzip
import http.server
import threading
import time
import zlib
from pathlib import Path

import brotli
import pyarrow as pa
import pytest

from citeaudit.archive.capture import CrawlResult, archive_date, http_get
from citeaudit.archive.capture.fetcher import DecodedSize
from citeaudit.archive.capture.scope import (
    Refused,
    Scope,
    from_settings,
    literal_ip,
    private_kind,
    strip_credentials,
)
from citeaudit.config import ConfigError, FetchSettings, parse_fetch
from tests.archive.fetch_site import FetchSite

T0 = dt.datetime.now(dt.UTC).replace(microsecond=0)
DAY = T0.date().isoformat()
TS = pa.timestamp("us", tz="UTC")


def crawl(raw: Path, urls: list[str], **kw) -> CrawlResult:
    cit = pa.table({"answer_id": ["a"] * len(urls), "url": urls,
                    "retrieved_at": pa.array([T0] * len(urls), TS)})
    ans = pa.table({"answer_id": ["a"], "observed_at": pa.array([T0], TS)})
    s = FetchSettings(**({"enabled": True, "contact": "ops@example.org",
                          "per_host_delay_seconds": 0.0, "read_timeout_seconds": 2.0,
                          "total_timeout_seconds": 3.0, "max_retries": 0,
                          "soft_404_probe": False} | kw))
    return archive_date(raw, DAY, cit, ans, s, now=T0)


def page_rows(res: CrawlResult) -> list[dict]:
    return [r for r in res.log.to_pylist() if r["purpose"] != "robots"]


@pytest.mark.parametrize("host,kind", [
    ("127.0.0.1", "loopback"), ("2130706433", "loopback"), ("0177.0.0.1", "loopback"),
    ("0x7f000001", "loopback"), ("127.1", "loopback"), ("[::1]", "loopback"),
    ("::ffff:127.0.0.1", "loopback"), ("0.0.0.0", "unspecified"),
    ("169.254.169.254", "link-local"), ("10.1.2.3", "private"), ("192.168.0.1", "private"),
    ("fd12::1", "private"), ("224.0.0.1", "multicast"), ("240.0.0.1", "reserved"),
    ("100.64.0.1", "non-global"), ("2002:7f00:1::", "loopback"), ("64:ff9b::a00:1", "private"),
])
def test_every_spelling_of_an_inside_address_is_named(host, kind):
    assert private_kind(literal_ip(host)) == kind
    in_url = f"[{host}]" if ":" in host and not host.startswith("[") else host
    with pytest.raises(Refused) as exc:
        Scope(allowed_ports=(80,)).check_url(f"http://{in_url}/")
    assert exc.value.outcome == "private_address"


def test_public_addresses_and_names_pass_the_text_check():
    for host in ("8.8.8.8", "93.184.216.34", "example.org", "[2606:4700::1111]"):
        Scope().check_url(f"https://{host}/a")
    assert literal_ip("example.org") is None and literal_ip("1.2.3.4.5") is None


def test_schemes_ports_and_host_lists():
    s = Scope(deny_hosts=("127.0.0.1", "ads.example", "10.0.0.0/8"),
              allow_private_networks=True, allowed_ports=(80, 443, 8080))
    for url, outcome in [("ftp://example.org/", "unsupported_url"),
                         ("file:///etc/passwd", "unsupported_url"),
                         ("gopher://example.org:70/", "unsupported_url"),
                         ("http://example.org:22/", "port_refused"),
                         ("http://2130706433/", "host_denied"),       # deny by address
                         ("http://0x7f.1/", "host_denied"),
                         ("http://x.ads.example/", "host_denied"),    # subdomain of a name
                         ("http://[::ffff:10.9.9.9]/", "host_denied")]:
        with pytest.raises(Refused) as exc:
            s.check_url(url)
        assert exc.value.outcome == outcome, url
    # a hosts-file name is judged by what it resolves to, names and addresses both
    with pytest.raises(Refused) as exc:
        Scope().resolve("localhost", 80)
    assert exc.value.outcome == "private_address"
    with pytest.raises(Refused) as exc:
        s.resolve("localhost", 80)
    assert exc.value.outcome == "host_denied"
    allow = Scope(allow_hosts=("example.org",))
    allow.check_url("http://www.example.org/")
    with pytest.raises(Refused):
        allow.check_url("http://example.org.evil.test/")


def test_credentials_are_dropped():
    assert strip_credentials("http://user:pw@Example.org:8080/a?b#c") == \
        "http://Example.org:8080/a?b#c"
    assert strip_credentials("https://example.org/@x") == "https://example.org/@x"


def test_config_keys():
    f = parse_fetch({"allow_private_networks": True, "allowed_ports": [80, 8000]}, Path("c.yaml"))
    assert from_settings(f) == Scope(True, (80, 8000))
    assert from_settings(FetchSettings()).allow_private_networks is False
    with pytest.raises(ConfigError, match="fetch.allowed_ports"):
        parse_fetch({"allowed_ports": [0]}, Path("c.yaml"))
    with pytest.raises(ConfigError, match="fetch.allow_private_networks"):
        parse_fetch({"allow_private_networks": "yes"}, Path("c.yaml"))


def test_loopback_is_refused_by_default_and_fetched_only_with_the_opt_in(tmp_path):
    with FetchSite() as site:
        port = site.server.server_port
        urls = [f"http://127.0.0.1:{port}/page1", f"http://2130706433:{port}/page2",
                f"http://0177.0.0.1:{port}/page3", f"http://0x7f000001:{port}/page4",
                f"http://127.1:{port}/page5", f"http://localhost:{port}/page6",
                f"http://[::ffff:127.0.0.1]:{port}/page7", f"http://0.0.0.0:{port}/page8",
                f"http://[::1]:{port}/page9"]
        res = crawl(tmp_path / "a", urls, allowed_ports=(80, 443, port))
        assert site.log.requests == []                       # not even robots.txt
        rows = page_rows(res)
        assert len(rows) == len(urls)
        # every spelling, the IPv6 literals too (the canonicalizer keeps their brackets), is
        # refused by the scope, saying why and how to allow it
        assert {r["outcome"] for r in rows} == {"private_address"}
        assert all("allow_private_networks" in r["detail"] for r in rows)
        assert {r["cited_url"] for r in rows} >= {f"http://[::1]:{port}/page9",
                                                  f"http://[::ffff:127.0.0.1]:{port}/page7"}
        # the default port list refuses a random port before any address is looked at
        res = crawl(tmp_path / "b", urls[:1])
        assert [r["outcome"] for r in page_rows(res)] == ["port_refused"]
        assert site.log.requests == []
        # with the opt-in, the same URLs are fetched
        res = crawl(tmp_path / "c", urls[:2], allowed_ports=(port,),
                    allow_private_networks=True)
        assert [r["outcome"] for r in page_rows(res)] == ["fetched", "fetched"]
        assert sorted(set(site.log.paths())) == ["/page1", "/page2", "/robots.txt"]


def test_a_redirect_into_the_network_is_refused(tmp_path):
    """Through ``--via`` (the operator's origin) a public-looking page redirects to loopback:
    the hop is refused by default, the listener never sees it; the opt-in fetches it."""
    with FetchSite() as site:
        port = site.server.server_port
        url = "http://r.test/hop1"  # the site answers /hop1 -> /hop2 -> 200
        res = crawl(tmp_path / "a", [url], via=site.origin)
        assert [r["outcome"] for r in page_rows(res)] == ["fetched", "fetched"]
        inside = f"http://2130706433:{port}/page1"
        site_paths = len(site.log.requests)
        redirect = RedirectSite(inside)
        with redirect:
            res = crawl(tmp_path / "b", ["http://pub.test/go"], via=redirect.origin,
                        allowed_ports=(80, port))
            assert [(r["hop"], r["outcome"]) for r in page_rows(res)] == [
                (0, "fetched"), (1, "private_address")]
            assert redirect.paths == ["/robots.txt", "/go"]
            res = crawl(tmp_path / "c", ["http://pub.test/go"], via=redirect.origin,
                        allow_private_networks=True, allowed_ports=(80, port))
            assert [(r["hop"], r["outcome"]) for r in page_rows(res)] == [
                (0, "fetched"), (1, "fetched")]
            assert redirect.paths[-1] == "/page1"
        assert len(site.log.requests) == site_paths


class RedirectSite:
    """A loopback origin that redirects every page to ``target`` (robots.txt: allow all),
    except the path of ``target`` itself, which it serves."""

    def __init__(self, target: str, robots_to: str | None = None) -> None:
        self.paths: list[str] = []
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a) -> None:
                pass

            def do_GET(self) -> None:
                from urllib.parse import urlsplit

                p = urlsplit(self.path)
                path = p.path
                outer.paths.append(path)
                if path == "/robots.txt" and robots_to:
                    self._send(301, b"", {"Location": robots_to})
                elif path == "/robots.txt" or path == urlsplit(target).path:
                    self._send(200, b"User-agent: *\nAllow: /\n" if path == "/robots.txt"
                               else b"<html><p>inside</p></html>")
                else:
                    self._send(302, b"", {"Location": target})

            def _send(self, status: int, body: bytes, headers: dict | None = None) -> None:
                self.send_response(status)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(body)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def __enter__(self) -> RedirectSite:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_robots_redirect_into_the_network_is_refused(tmp_path):
    with FetchSite() as inside:
        target = f"http://127.0.0.1:{inside.server.server_port}/robots.txt"
        with RedirectSite("/never", robots_to=target) as site:
            res = crawl(tmp_path, ["http://pub.test/page"], via=site.origin,
                        allowed_ports=(80, inside.server.server_port))
        robots = sorted((r for r in res.log.to_pylist() if r["purpose"] == "robots"),
                        key=lambda r: r["requested_at"])
        assert [r["outcome"] for r in robots] == ["fetched", "private_address"]
        assert inside.log.requests == []
        # robots.txt could not be read: the page is not fetched (disallow all)
        assert [r["outcome"] for r in page_rows(res)] == ["private_address"]


def test_credentials_never_reach_the_log_or_the_warc(tmp_path):
    with FetchSite() as site:
        res = crawl(tmp_path, ["http://alice:s3cret@cred.test/page1"], via=site.origin,
                    allow_private_networks=True)
    assert [r["outcome"] for r in page_rows(res)] == ["fetched"]
    assert "s3cret" not in str(res.log.to_pylist())
    for f in tmp_path.rglob("*"):
        if f.is_file():
            data = f.read_bytes()
            if f.suffix == ".gz":
                data = gzip.decompress(data)
            assert b"s3cret" not in data and b"alice" not in data, f


class BombSite:
    """Serves compressed bodies that inflate far beyond what they weigh, and a trickle."""

    def __init__(self, decoded: int) -> None:
        raw = b"\0" * decoded
        self.bodies = {"/gzip": ("gzip", gzip.compress(raw, 9)),
                       "/br": ("br", brotli.compress(raw, quality=5)),
                       "/deflate": ("deflate", zlib.compress(raw, 9)),
                       "/small": ("gzip", gzip.compress(b"<p>fine</p>"))}
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a) -> None:
                pass

            def do_GET(self) -> None:
                from urllib.parse import urlsplit

                path = urlsplit(self.path).path  # absolute-form through --via
                if path == "/trickle":  # one header byte at a time, for a long time
                    try:
                        for b in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 200:
                            self.wfile.write(bytes([b]))
                            self.wfile.flush()
                            time.sleep(0.1)
                    except OSError:
                        pass
                    self.close_connection = True
                    return
                coding, body = outer.bodies[path]
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Encoding", coding)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(body)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def __enter__(self) -> BombSite:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def get(site, path: str, **kw):
    return http_get(f"http://bomb.test{path}", via=site.origin, user_agent="t",
                    connect_timeout=2, read_timeout=kw.get("read_timeout", 2),
                    total_timeout=kw.get("total_timeout", 5),
                    max_body=kw.get("max_body", 1 << 20))


def _decoded_len(coding: str, body: bytes) -> int:
    if coding == "br":
        return len(brotli.Decompressor().process(body))
    d = zlib.decompressobj(16 + zlib.MAX_WBITS if coding == "gzip" else zlib.MAX_WBITS)
    return len(d.decompress(body))


def test_a_compression_bomb_stops_at_the_decoded_cap():
    cap = 1 << 20
    with BombSite(decoded=64 << 20) as site:
        for path in ("/gzip", "/br", "/deflate"):
            coding, wire = site.bodies[path]
            assert len(wire) < cap  # small on the wire: only the decoded size gives it away
            att = get(site, path, max_body=cap)
            assert att.outcome == "too_large", path
            assert att.exchange.truncated == "length"
            assert "decoded body larger" in att.detail
            assert _decoded_len(coding, att.exchange.body) <= cap  # what is kept stays bounded
        assert get(site, "/small").outcome == "fetched"


def test_decoded_size_counts_stacked_codings_and_gives_up_on_broken_ones():
    body = gzip.compress(gzip.compress(b"x" * 5000))
    d = DecodedSize("gzip, gzip", 4000)
    assert d.feed(body) is True
    d = DecodedSize("gzip", 10)
    assert d.feed(b"not gzip at all") is False and d.active is False
    assert DecodedSize("compress", 10).active is False


def test_a_header_trickle_stops_at_the_total_timeout():
    """One byte every 0.1 s never trips the 1 s read timeout; only the total timeout (1.5 s)
    ends it (without it the fetch would run 20 s and end as a bad response)."""
    with BombSite(decoded=10) as site:
        att = get(site, "/trickle", read_timeout=1.0, total_timeout=1.5)
    assert att.outcome == "timeout", (att.outcome, att.detail)
    assert "total time" in att.detail


def test_the_connected_address_is_checked_again():
    """The peer of the open socket is judged itself, whatever the name resolved to before
    (a rebinding resolver cannot swap the address between check and connect)."""
    with pytest.raises(Refused) as exc:
        Scope().check_peer("public.example", "127.0.0.1")
    assert exc.value.outcome == "private_address"
    with pytest.raises(Refused):
        Scope().check_peer("public.example", "::ffff:169.254.169.254")
    Scope().check_peer("public.example", "93.184.216.34")
    Scope(allow_private_networks=True).check_peer("intranet.example", "10.0.0.5")


def test_robots_txt_is_asked_once_per_origin_whatever_the_spelling():
    """Host case, a trailing dot, the default port written out and credentials name one
    origin: one robots.txt request (real HTTP to the loopback site through ``via``), one
    verdict; another port is another origin."""
    from citeaudit.archive.capture.fetcher import RobotsCache, http_get

    with FetchSite() as site:
        cache = RobotsCache(lambda u: http_get(
            u, via=site.origin, user_agent="citeaudit-test", connect_timeout=2.0,
            read_timeout=2.0, total_timeout=3.0, max_body=100_000))
        spellings = ["http://live.test/page1", "http://LIVE.test/page2",
                     "http://live.test:80/page3", "http://live.test./page4",
                     "http://user:pw@Live.Test:80/private/x"]
        verdicts = [cache.allowed(u)[0] for u in spellings]
        assert verdicts == [True, True, True, True, False]
        assert site.log.paths().count("/robots.txt") == 1
        cache.allowed("http://live.test:8080/page1")
        assert site.log.paths().count("/robots.txt") == 2
    assert RobotsCache.robots_url("https://[2001:DB8::1]:443/a") == "https://[2001:db8::1]/robots.txt"
