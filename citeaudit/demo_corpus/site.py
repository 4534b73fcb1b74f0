"""The demo's loopback web site, and the live archiving of the demo's last observation date.

The site serves the demo world as the generator wrote it: for every page a demo answer cites,
the newest readable response the supplied WARCs hold (status, headers and payload bytes as
stored, so a page that has not changed is fetched with the same payload digest and becomes a
revisit). On top, it plants what a polite crawler must cope with, each on a cited page of the
last date (:func:`plan_site`, deterministic from the corpus): a robots.txt that disallows a
cited path, a slow page (past the read timeout), a 429 with Retry-After, an oversize page, and
a host on the deny list; redirect chains are served as the WARCs recorded them. And a page a
script renders (``script``: the planted alignment case ``script_shell_live``, whose document
is a shell): the site also serves its script and the JSON the script loads
(:func:`citeaudit.demo_corpus.alignment_cases.site_assets`). The demo archives with
``fetch.browser: auto``: where Debian's Chromium and Playwright are installed the shell is
rendered (``rendered``, its DOM a ``urn:rendered-dom:`` record); where they are not, the page
gets a ``browser_unavailable`` row and its static capture stands, the crawl goes on.

The demo's dates are fixed (the corpus is deterministic), so a live capture is taken weeks
after the last date's reference times: it is the pages' *current state*
(``fetch.current_after_days``), which the L1 ``changed`` rule compares with; the supplied WARCs
of every date stay. The site listens on 127.0.0.1 only and is stopped when the crawl ends.
"""

from __future__ import annotations

import argparse
import contextlib
import http.server
import json
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from citeaudit.config import CONFIG_FILE, DEFAULT_STRIP_PARAMS

DEMO_CONTACT = "demo-operator@citeaudit.invalid"
DEMO_FETCH = {
    "enabled": False,  # `citeaudit archive` fetches; `citeaudit run` stays offline and repeatable
    "contact": DEMO_CONTACT,
    "operator": "citeaudit demo",
    # the demo's site listens on 127.0.0.1: a private address, so the demo opts in explicitly
    # (the default refuses loopback, private and link-local addresses)
    "allow_private_networks": True,
    "per_host_delay_seconds": 0.05,  # our own loopback site; the default for real hosts is 1 s
    "concurrency": 8,
    "connect_timeout_seconds": 2.0,
    "read_timeout_seconds": 1.0,
    "total_timeout_seconds": 5.0,
    "max_body_bytes": 262144,
    "max_retries": 2,
    "max_retry_after_seconds": 2.0,
    "retry_backoff_seconds": 0.1,
    # shells are rendered in Debian's chromium when it is installed (with the browser extra);
    # without it each gets a browser_unavailable row and the demo goes on
    "browser": "auto",
    "browser_timeout_seconds": 30.0,
}
SLOW_SECONDS = 2.5
OVERSIZE_BYTES = 400_000
EXPECTED = {"robots": "robots_disallowed", "slow": "timeout", "busy": "fetched",
            "oversize": "too_large", "denied": "host_denied", "script": "rendered"}
"""The first crawl's outcome of each planted page (``script``: of its render, where a browser
is installed; :func:`expected_outcomes`)."""


def browser_available() -> bool:
    """Whether this machine can render (a Chromium and the playwright package)."""
    from citeaudit.archive.capture import find_chromium

    try:
        import playwright.sync_api  # noqa: F401 - only to know it is there
    except ImportError:
        return False
    return find_chromium(None) is not None


def expected_outcomes(planted: dict[str, str]) -> dict[str, str]:
    """The outcome each planted page must end with on this machine."""
    out = {k: EXPECTED[k] for k in planted}
    if "script" in out and not browser_available():
        out["script"] = "browser_unavailable"
    return out


def _last_date(raw: Path) -> str:
    from citeaudit.layout import answer_dates

    dates = answer_dates(raw)
    if not dates:
        raise FileNotFoundError(f"no answers/<date>/ under {raw}")
    return dates[-1]


def _cited_urls(raw: Path, date: str) -> list[str]:
    from citeaudit.archive.capture import canonical_url
    from citeaudit.ingest.answers import answer_files, ingest_files

    result = ingest_files(answer_files(raw, date), raw)
    urls = {canonical_url(u, DEFAULT_STRIP_PARAMS)[0] for u in
            result.citations.column("url").to_pylist()}
    return sorted(u for u in urls if u)


def _served_pages(raw: Path) -> dict[str, dict]:
    """canonical URL -> newest readable response in the supplied WARCs (status, headers, body)."""
    from warcio.archiveiterator import ArchiveIterator

    from citeaudit.archive.capture import canonical_url, is_fetched_file
    from citeaudit.archive.index import index_paths

    files = sorted(p for p in (raw / "warc").rglob("*.warc.gz") if not is_fetched_file(p))
    table = index_paths([(f, f.relative_to(raw).as_posix()) for f in files], workers=1)
    best: dict[str, dict] = {}
    for r in table.to_pylist():
        if (r["record_type"] != "response" or r["error"] or r["truncated"]
                or r["digest_verified"] is False or r["capture_time"] is None
                or r["http_status"] is None):
            continue
        url = canonical_url(r["target_uri"], DEFAULT_STRIP_PARAMS)[0]
        if url and (url not in best or r["capture_time"] >= best[url]["capture_time"]):
            best[url] = r
    pages: dict[str, dict] = {}
    by_file: dict[str, list[tuple[str, int]]] = {}
    for url, r in best.items():
        by_file.setdefault(r["file"], []).append((url, r["offset"]))
    for name, wanted in by_file.items():
        with open(raw / name, "rb") as fh:
            for url, offset in wanted:
                fh.seek(offset)
                rec = next(iter(ArchiveIterator(fh)))
                headers = [(k, v) for k, v in rec.http_headers.headers
                           if k.lower() not in ("transfer-encoding", "content-length",
                                                "connection")]
                pages[url] = {"status": rec.http_headers.get_statuscode(),
                              "headers": headers, "body": rec.raw_stream.read()}
    return pages


def plan_site(raw: Path) -> dict[str, Any]:
    """The planted behaviours of the demo site (deterministic from the corpus)."""
    date = _last_date(raw)
    cited = _cited_urls(raw, date)
    pages = _served_pages(raw)
    from citeaudit.demo_corpus.alignment_cases import live_script_urls

    scripted = [u for u in live_script_urls() if u in cited and u in pages]
    ok = [u for u in cited if u in pages and pages[u]["status"] == "200"
          and u not in scripted]
    hosts = sorted({urlsplit(u).hostname for u in ok})
    picks: dict[str, str] = {}
    used_hosts: set[str] = set()
    for kind in ("denied", "robots", "slow", "busy", "oversize"):
        for u in ok:
            h = urlsplit(u).hostname
            if h not in used_hosts:
                picks[kind] = u
                used_hosts.add(h)
                break
    denied = [urlsplit(picks["denied"]).hostname] if "denied" in picks else []
    script = [u for u in scripted if urlsplit(u).hostname not in denied]
    if script:
        picks["script"] = script[0]
    return {"date": date, "planted": picks, "cited_urls": len(cited), "hosts": len(hosts),
            "deny_hosts": denied}


class DemoSite:
    """The loopback server; ``with DemoSite(raw) as site: site.origin``."""

    def __init__(self, raw: Path, plan: dict[str, Any] | None = None) -> None:
        self.raw = Path(raw)
        self.plan = plan or plan_site(self.raw)
        self.pages = _served_pages(self.raw)
        from citeaudit.demo_corpus.alignment_cases import site_assets

        self.assets = site_assets()
        self.requests: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        # polled every 0.05 s, not 0.5: stop() waits for the next poll
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,),
                                       daemon=True)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def _handler(self):
        site = self
        planted = {k: urlsplit(v) for k, v in self.plan["planted"].items()}
        busy_seen: set[str] = set()

        def is_(kind: str, host: str, path: str) -> bool:
            p = planted.get(kind)
            return p is not None and p.hostname == host and \
                (p.path + (f"?{p.query}" if p.query else "")) == path

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # no ~40 ms delayed-ACK stall per answer

            def log_message(self, *args) -> None:
                pass

            def _send(self, status: int, headers: list, body: bytes, reason: str = "") -> None:
                self.send_response(status, reason or None)
                for k, v in headers:
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Connection", "close")
                self.end_headers()
                # the crawler may stop reading (size limit, timeout): its choice
                with contextlib.suppress(OSError):
                    self.wfile.write(body)

            def do_GET(self) -> None:
                host = (self.headers.get("Host") or "").split(":")[0].lower()
                path, scheme = self.path, None
                if not path.startswith("/"):  # absolute-form (the crawler's --via): scheme too
                    parts = urlsplit(path)
                    scheme = parts.scheme.lower()
                    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
                with site._lock:
                    site.requests.append((host, path))
                plain = [("Content-Type", "text/plain")]
                if path == "/robots.txt":
                    robots = planted.get("robots")
                    if robots is not None and robots.hostname == host:
                        return self._send(200, plain, f"User-agent: *\nDisallow: "
                                          f"{robots.path}\n".encode())
                    return self._send(404, plain, b"no robots.txt")
                if is_("slow", host, path):
                    time.sleep(SLOW_SECONDS)
                if is_("busy", host, path) and host + path not in busy_seen:
                    busy_seen.add(host + path)
                    return self._send(429, plain + [("Retry-After", "1")], b"slow down")
                if scheme is None:
                    scheme = "https" if f"https://{host}{path}" in site.pages else "http"
                page = site.pages.get(f"{scheme}://{host}{path}")
                asset = site.assets.get(f"{scheme}://{host}{path}")
                if page is None and asset is not None:  # a planted application's script, JSON
                    return self._send(200, [("Content-Type", asset[0])], asset[1])
                if page is None:
                    return self._send(404, [("Content-Type", "text/html")], b"<h1>404</h1>")
                body = page["body"]
                if is_("oversize", host, path):
                    body = body + b"<!--" + b"x" * OVERSIZE_BYTES + b"-->"
                return self._send(int(page["status"]), page["headers"], body)

        return Handler

    def __enter__(self) -> DemoSite:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def write_demo_config(raw: Path, plan: dict[str, Any]) -> Path:
    """``raw/citeaudit.yaml``: the demo's fetch settings (deny list from the plan)."""
    doc = {"fetch": DEMO_FETCH | {"deny_hosts": plan["deny_hosts"]}}
    path = Path(raw) / CONFIG_FILE
    path.write_text("# citeaudit operations config of the demo (see docs/architecture.md)\n"
                    + yaml.safe_dump(doc, sort_keys=True), encoding="utf-8")
    return path


def archive_live(raw: Path, progress: bool = False) -> dict[str, Any]:
    """Start the site, archive the last observation date through it, stop it; returns the
    fetch outcomes and records them in ``ground_truth.json`` under ``fetch``."""
    from citeaudit import config
    from citeaudit.archive.capture import archive_date
    from citeaudit.ingest.answers import answer_files, ingest_files

    raw = Path(raw)
    plan = plan_site(raw)
    write_demo_config(raw, plan)
    settings = config.load(raw).fetch
    date = plan["date"]
    ingested = ingest_files(answer_files(raw, date), raw)
    with DemoSite(raw, plan) as site:
        result = archive_date(raw, date, ingested.citations, ingested.answers,
                              settings.with_via(site.origin))
    log = result.log.to_pylist()
    outcomes = Counter(r["outcome"] for r in log)
    got = {kind: sorted({r["outcome"] for r in log if r["url"] == url and r["hop"] == 0
                         and r["purpose"] != "robots"})
           for kind, url in plan["planted"].items()}
    truth_path = raw / "ground_truth.json"
    if truth_path.is_file():
        truth = json.loads(truth_path.read_text(encoding="utf-8"))
        truth["fetch"] = {
            "date": date, "planted": plan["planted"],
            "expected_outcomes": expected_outcomes(plan["planted"]),
            "supplied_crawl_dates": truth.get("crawl_dates"),
            "note": "every date keeps its supplied WARCs; the last date is also archived "
                    "live (current state) into warc/<crawl day>/citeaudit-<date>-*.warc.gz",
        }
        truth_path.write_text(json.dumps(truth, sort_keys=True, indent=1, ensure_ascii=False)
                              + "\n", encoding="utf-8", newline="\n")
    return {"date": date, "outcomes": dict(sorted(outcomes.items())), "planted": got,
            "files": [f.relative_to(raw).as_posix() for f in result.files],
            "requests": len(site.requests)}


def register_cli(subparsers: Any) -> None:
    """Add ``demo-archive --raw DIR``."""
    p = subparsers.add_parser(
        "demo-archive",
        help="archive the demo's last date live from its own loopback web site",
        description="Start the demo's web site on 127.0.0.1, run `citeaudit archive` for the "
                    "last observation date through it (--via), stop the site, print outcomes.")
    p.add_argument("--raw", default="data/raw", help="demo raw folder (default: data/raw)")
    p.set_defaults(func=_cli)


def _cli(args: argparse.Namespace) -> int:
    raw = Path(args.raw)
    try:
        out = archive_live(raw)
    except FileNotFoundError as exc:
        print(f"demo-archive: {exc}", file=sys.stderr)
        return 2
    listed = ", ".join(f"{k} {v}" for k, v in out["outcomes"].items())
    print(f"demo-archive {out['date']}: {listed} ({out['requests']} requests to the "
          f"loopback site, {len(out['files'])} WARC file(s))", file=sys.stderr)
    expected = expected_outcomes(out["planted"])
    for kind, got in out["planted"].items():
        print(f"  planted {kind}: {', '.join(got)} (a first crawl ends {expected[kind]})",
              file=sys.stderr)
    if out["outcomes"].get("browser_unavailable"):
        print("  no browser here: the script-rendered page stays a shell (unresolved "
              "script_shell); apt-get install chromium and pip install 'citeaudit[browser]' "
              "render it", file=sys.stderr)
    return 0
