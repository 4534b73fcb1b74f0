"""Benchmark the live crawl: pages/s and peak RSS against a loopback site, beside GNU wget.

Run: ``.venv/bin/python benchmarks/bench_fetch.py`` (``make bench``). Options: ``--hosts N``
(default 200), ``--pages N`` per host (default 20), ``--delay-hosts``/``--delay-pages`` for the
politeness run (default 10 × 5 at the default 1 s per-host delay), ``--skip-wget``.

The site is a threaded HTTP server on 127.0.0.1 in its own process (its memory is not counted),
serving ``http://hNNN.bench.test/pageM`` (a 2-8 KB HTML page each) for any Host; it also
accepts the absolute-form request line a proxy client sends, which is how wget reaches it
(``-e use_proxy=on -e http_proxy=127.0.0.1:PORT``; the WARC still records the real URLs).
Every configuration runs in a fresh child process.

a. *Machinery*: every page once, politeness delay 0, citeaudit at concurrency 1 and 8,
   at N/4 pages and at N pages (memory must not grow with the page count); pages/s over the
   crawl itself, the whole process's wall time (start-up and imports) in the notes;
b. *wget*: ``wget --warc-file -i urls.txt`` over the same N pages (single connection);
c. *Politeness*: ``--delay-hosts`` × ``--delay-pages`` at the default 1 s delay; the server's
   own timestamps give the smallest gap between two requests to one host (must be >= 1 s);
   the same pages through ``wget --wait=1`` (1 s between any two requests: one host after
   the other);
d. *Equal politeness against wget*: one host × ``--delay-pages`` pages, 1 s between two requests
   (citeaudit ``per_host_delay_seconds: 1``, concurrency 1; ``wget --wait=1 -e robots=on``,
   which reads robots.txt only when it recurses: the ``requests`` note shows it);
e. *Browser capture*: ``--browser-hosts`` × ``--browser-pages`` script-rendered pages (a shell
   whose script fetches a JSON document and renders it: 3 requests a page), captured with
   ``fetch.browser: never`` (static shells only) and ``auto`` (each shell rendered in headless
   Chromium, every sub-request fetched and archived by the crawler), delay 0. Peak RSS here is
   the whole process tree (the crawl, Playwright's driver and Chromium's processes), sampled.

Peak RSS of every configuration is the child's own (``os.wait4`` from a fresh launcher,
``peak_rss.py``); the browser rows also sample the whole process tree with psutil
(``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import argparse
import contextlib
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def page_body(host: str, path: str) -> bytes:
    n = 2000 + (hash((host, path)) % 6000)
    text = f"<html><head><title>{host}{path}</title></head><body><p>"
    return (text + ("lorem ipsum " * (n // 12)) + "</p></body></html>").encode()


SPA_SHELL = (b"<!doctype html><html><head><title>app</title><script src='/app.js' defer>"
             b"</script></head><body><div id='root'></div></body></html>")
SPA_JS = (b"fetch('/data' + location.pathname.slice(4) + '.json').then(r => r.json())"
          b".then(d => { document.getElementById('root').innerHTML = '<p>' + d.text + '</p>'; });")


def serve(port_file: Path, log_file: Path) -> None:
    """The loopback site (child process): writes its port, logs (host, monotonic time)."""
    log: list[tuple[str, float]] = []
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a) -> None:
            pass

        def setup(self) -> None:
            super().setup()
            # no Nagle delay on kept-alive connections (wget reuses one), fair to both clients
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_GET(self) -> None:
            path = self.path
            host = (self.headers.get("Host") or "").split(":")[0]
            if path.startswith("http://"):  # proxy form (wget)
                rest = path[7:]
                host, _, tail = rest.partition("/")
                path = "/" + tail
            with lock:
                log.append((host, time.monotonic()))
            if path == "/robots.txt":
                body, status = b"User-agent: *\nDisallow: /private\n", 200
            elif path.startswith("/page"):
                body, status = page_body(host, path), 200
            elif path.startswith("/spa"):  # a script shell: the content comes from /dataM.json
                body, status = SPA_SHELL, 200
            elif path == "/app.js":
                body, status = SPA_JS, 200
            elif path.startswith("/data"):
                body = json.dumps({"text": page_body(host, path).decode()[-2000:]}).encode()
                status = 200
            else:
                body, status = b"not found", 404
            self.send_response(status)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:  # the driver asks for the log
            with lock:
                body = json.dumps(log).encode()
                log.clear()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    port_file.write_text(str(server.server_port))
    server.serve_forever()


def urls(hosts: int, pages: int, kind: str = "page") -> list[str]:
    return [f"http://h{h:03d}.bench.test/{kind}{p}" for h in range(hosts) for p in range(pages)]


def run_ours(args: argparse.Namespace) -> None:
    """Child: crawl ``urls`` with citeaudit; print JSON (pages, seconds, outcomes)."""
    import datetime as dt

    from citeaudit.archive.capture import lean_process

    lean_process()  # as the archive command does
    import pyarrow as pa

    from citeaudit.archive import capture as crawl
    from citeaudit.config import FetchSettings

    todo = urls(args.hosts, args.pages, args.kind)
    now = dt.datetime.now(dt.UTC)
    ts = pa.timestamp("us", tz="UTC")
    cit = pa.table({"answer_id": ["a"] * len(todo), "url": todo,
                    "retrieved_at": pa.array([now] * len(todo), ts)})
    ans = pa.table({"answer_id": ["a"], "observed_at": pa.array([now], ts)})
    # the site listens on loopback: opt in explicitly; no soft-404 probe, so the page count
    # compares with wget's (which fetches the cited pages only)
    s = FetchSettings(enabled=True, via=args.via, contact="bench@citeaudit.invalid",
                      per_host_delay_seconds=args.delay, concurrency=args.concurrency,
                      allow_private_networks=True, soft_404_probe=False,
                      browser=args.browser)
    t0 = time.perf_counter()
    res = crawl.archive_date(Path(args.out), now.date().isoformat(), cit, ans, s, now=now)
    secs = time.perf_counter() - t0
    outcomes: dict[str, int] = {}
    for o in res.log.column("outcome").to_pylist():
        outcomes[o] = outcomes.get(o, 0) + 1
    print(json.dumps({"pages": len(todo), "seconds": secs, "outcomes": outcomes}))


def child(cmd: list[str], env: dict | None = None, tree: bool = False
          ) -> tuple[str, float, float]:
    """Run one configuration in a fresh process: (stdout, seconds, peak RSS MB).

    The command starts from a fresh launcher interpreter (``peak_rss``), so its peak
    (``os.wait4``) is its own, never this script's. With ``tree`` (the browser rows, where
    Chromium's processes are part of the cost) the whole process tree is also sampled every
    20 ms with psutil and the larger figure kept."""
    from peak_rss import Launched

    t0 = time.perf_counter()
    launched = Launched(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                        env=env)
    proc = launched.proc
    peak = 0
    if tree:
        import psutil

        watched = psutil.Process(proc.pid)
        while proc.poll() is None:
            try:
                rss = 0
                for p in watched.children(recursive=True):
                    with contextlib.suppress(psutil.Error):
                        rss += p.memory_info().rss
                peak = max(peak, rss)
            except psutil.Error:
                break
            time.sleep(0.02)
    stdout, stderr = proc.communicate(timeout=3600)
    measured = launched.wait()
    secs = time.perf_counter() - t0
    if measured.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed: {stderr[-2000:]}")
    return stdout, secs, max(peak / 2**20, measured.peak_mb)


def run_wget(wdir: Path, origin: str, pages: list[str], *extra: str) -> tuple[float, float]:
    """GNU wget fetching ``pages`` through the loopback site ``origin`` (as a proxy) into a
    WARC under ``wdir``, robots.txt obeyed: (seconds, peak RSS MB) of its process."""
    wdir.mkdir()
    listing = wdir / "urls.txt"
    listing.write_text("\n".join(pages) + "\n")
    env = dict(os.environ, http_proxy=origin.replace("http://", ""), no_proxy="")
    _, secs, rss = child(["wget", "-q", "-e", "use_proxy=on", "-e", "robots=on", *extra,
                          "--warc-file", str(wdir / "wget"), "--no-warc-keep-log",
                          "-P", str(wdir / "files"), "-i", str(listing)], env)
    return secs, rss


def server_log(origin: str) -> list[tuple[str, float]]:
    import urllib.request

    req = urllib.request.Request(origin + "/log", data=b"", method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:  # loopback only
        return json.loads(r.read())


def min_gap(log: list[tuple[str, float]]) -> float:
    by: dict[str, list[float]] = {}
    for h, t in log:
        by.setdefault(h, []).append(t)
    gaps = [b - a for ts in by.values() for a, b in zip(sorted(ts), sorted(ts)[1:], strict=False)]
    return min(gaps) if gaps else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hosts", type=int, default=200)
    ap.add_argument("--pages", type=int, default=20)
    ap.add_argument("--delay-hosts", type=int, default=10)
    ap.add_argument("--delay-pages", type=int, default=5)
    ap.add_argument("--browser-hosts", type=int, default=4)
    ap.add_argument("--browser-pages", type=int, default=5)
    ap.add_argument("--skip-wget", action="store_true")
    ap.add_argument("--skip-browser", action="store_true")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--serve", help=argparse.SUPPRESS)
    ap.add_argument("--via", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--delay", type=float, default=0.0, help=argparse.SUPPRESS)
    ap.add_argument("--concurrency", type=int, default=8, help=argparse.SUPPRESS)
    ap.add_argument("--kind", default="page", help=argparse.SUPPRESS)
    ap.add_argument("--browser", default="never", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(Path(args.serve), Path(args.serve + ".log"))
        return
    if args.child:
        run_ours(args)
        return

    work = Path(tempfile.mkdtemp(prefix="bench_fetch_"))
    port_file = work / "port"
    site = subprocess.Popen([sys.executable, __file__, "--serve", str(port_file)])
    try:
        for _ in range(100):
            if port_file.exists() and port_file.read_text():
                break
            time.sleep(0.05)
        origin = f"http://127.0.0.1:{port_file.read_text()}"
        me = [sys.executable, __file__, "--child", "--via", origin]
        rows = []
        quarter = max(1, args.pages // 4)
        for pages, conc in ((quarter, 8), (args.pages, 8), (args.pages, 1)):
            out = work / f"ours-{pages}-{conc}"
            stdout, secs, rss = child(me + ["--out", str(out), "--hosts", str(args.hosts),
                                            "--pages", str(pages), "--concurrency", str(conc)])
            r = json.loads(stdout.strip().splitlines()[-1])
            served = len(server_log(origin))
            # pages/s over the crawl itself (archive_date); the whole process's wall time
            # (interpreter start and imports included, as for wget) in the notes
            rows.append((f"citeaudit, delay 0, concurrency {conc}", r["pages"],
                         r["pages"] / r["seconds"], rss,
                         {"requests": served, "wall_s": round(secs, 2),
                          "pages_per_wall_s": round(r["pages"] / secs, 1)}))
            shutil.rmtree(out)
        if not args.skip_wget and shutil.which("wget"):
            secs, rss = run_wget(work / "wget", origin, urls(args.hosts, args.pages))
            served = len(server_log(origin))
            rows.append(("GNU wget --warc-file (1 connection)", args.hosts * args.pages,
                         args.hosts * args.pages / secs, rss,
                         {"requests": served, "wall_s": round(secs, 2)}))
        out = work / "polite"
        stdout, secs, rss = child(me + ["--out", str(out), "--hosts", str(args.delay_hosts),
                                        "--pages", str(args.delay_pages), "--delay", "1.0",
                                        "--concurrency", str(args.delay_hosts)])
        r = json.loads(stdout.strip().splitlines()[-1])
        log = server_log(origin)
        rows.append((f"citeaudit, delay 1 s, {args.delay_hosts} hosts", r["pages"],
                     r["pages"] / secs, rss, {"min_gap_s": round(min_gap(log), 3),
                                              "requests": len(log),
                                              "wall_s": round(secs, 2)}))
        if not args.skip_wget and shutil.which("wget"):
            # the same pages through wget at the same 1 s (wget waits between any two
            # requests, so it takes the hosts one after the other)
            secs, rss = run_wget(work / "wget-polite", origin,
                                 urls(args.delay_hosts, args.delay_pages), "--wait=1")
            log = server_log(origin)
            pages = args.delay_hosts * args.delay_pages
            rows.append((f"GNU wget --wait=1, {args.delay_hosts} hosts", pages, pages / secs,
                         rss, {"min_gap_s": round(min_gap(log), 3), "requests": len(log),
                               "wall_s": round(secs, 2)}))
        # equal politeness: one host, 1 s between two requests, robots.txt obeyed, one
        # connection at a time, for both
        out = work / "equal"
        stdout, secs, rss = child(me + ["--out", str(out), "--hosts", "1",
                                        "--pages", str(args.delay_pages), "--delay", "1.0",
                                        "--concurrency", "1"])
        r = json.loads(stdout.strip().splitlines()[-1])
        log = server_log(origin)
        rows.append(("citeaudit, 1 host, delay 1 s, robots", r["pages"],
                     r["pages"] / secs, rss, {"min_gap_s": round(min_gap(log), 3),
                                              "requests": len(log),
                                              "wall_s": round(secs, 2)}))
        if not args.skip_wget and shutil.which("wget"):
            secs, rss = run_wget(work / "wget-equal", origin, urls(1, args.delay_pages),
                                 "--wait=1")
            log = server_log(origin)
            rows.append(("GNU wget --warc-file --wait=1, robots", args.delay_pages,
                         args.delay_pages / secs, rss, {"min_gap_s": round(min_gap(log), 3),
                                                        "requests": len(log),
                                                        "wall_s": round(secs, 2)}))
        if not args.skip_browser:
            from citeaudit.archive.capture import find_chromium

            if find_chromium(None) is None:
                print("browser rows skipped: no Chromium (apt-get install chromium)",
                      file=sys.stderr)
            else:
                for mode in ("never", "auto"):
                    out = work / f"browser-{mode}"
                    stdout, secs, rss = child(me + [
                        "--out", str(out), "--hosts", str(args.browser_hosts),
                        "--pages", str(args.browser_pages), "--kind", "spa",
                        "--browser", mode], tree=True)
                    r = json.loads(stdout.strip().splitlines()[-1])
                    served = len(server_log(origin))
                    rows.append((f"citeaudit, script-rendered pages, browser {mode}",
                                 r["pages"], r["pages"] / r["seconds"], rss,
                                 {"requests": served, **{k: v for k, v in r["outcomes"].items()
                                                         if k in ("rendered", "fetched",
                                                                  "render_incomplete")}}))
                    shutil.rmtree(out, ignore_errors=True)
    finally:
        site.terminate()
        site.wait(10)
        shutil.rmtree(work, ignore_errors=True)
    print(f"{'configuration':45} {'pages':>6} {'pages/s':>9} {'peak RSS MB':>12}  notes")
    for name, pages, rate, rss, notes in rows:
        print(f"{name:45} {pages:>6} {rate:>9.1f} {rss:>12.0f}  {notes}")


if __name__ == "__main__":
    main()
