"""The live crawl of one observation date: plan (SQL), polite fetches, WARC, ``fetch_log``.

1. The day's cited URLs are canonicalized (tracking parameters stripped, the same SURT key the
   capture index uses) and planned in SQL against the captures already on disk
   (``sql/archive/select_fetch_plan.sql``): fetched for the reference time when no readable
   capture lies near it, fetched as the current state when the newest is older than
   ``current_after_days``, else skipped with a ``skipped_recent_capture`` row.
2. Pages are fetched per host in a thread pool of ``concurrency`` workers; :class:`HostGate`
   keeps one connection per host and the delay between requests; robots.txt is obeyed.
3. Redirects are not followed silently: each hop is fetched (and checked against robots and
   the host lists) and archived as its own record, at most ``max_redirects`` hops.
4. Retries only after 429, 503 and connection resets, at most ``max_retries``, waiting for
   ``Retry-After`` (capped at ``max_retry_after_seconds``) or an exponential backoff.

Where a capture comes from is a *source*: :func:`crawl` is the live source;
:func:`lookup_archives` (:mod:`citeaudit.archive.capture.from_archives`) copies captures from
web archives and returns the same ``fetch_log`` rows (:mod:`citeaudit.archive.capture.fetch_log`)
and WARC records. Outcomes are plain strings (:data:`OUTCOMES` lists the ones this source
writes), so a source may add names.
"""

from __future__ import annotations

import base64
import datetime as dt
import fnmatch
import hashlib
import secrets
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pyarrow as pa

from citeaudit import duck, storage
from citeaudit.archive.capture.browser import (
    INSTALL_HINT,
    RENDER_PAGES,
    Renderer,
    RenderJob,
    find_chromium,
)
from citeaudit.archive.capture.fetch_log import (
    FETCH_LOG_SCHEMA,
    LOG_FOLDER,
    CrawlResult,
    FetchLog,
    write_log,
)
from citeaudit.archive.capture.fetcher import (
    Attempt,
    ConnectionPool,
    HostGate,
    RobotsCache,
    http_get,
)
from citeaudit.archive.capture.from_archives import lookup_archives
from citeaudit.archive.capture.resume import JOURNAL_SUFFIX, recover
from citeaudit.archive.capture.robots_memory import RobotsMemory
from citeaudit.archive.capture.scope import Refused, origin_of, strip_credentials
from citeaudit.archive.capture.scope import from_settings as scope_from_settings
from citeaudit.archive.capture.shell import decoded_html, script_shell
from citeaudit.archive.capture.warc_writer import (
    RENDERED_URN,
    FetchWarcWriter,
    HttpExchange,
    Written,
    default_info,
    fetched_files,
    is_fetched_file,
    software_version,
)
from citeaudit.archive.index import canonicalize, index_paths
from citeaudit.config import ArchiveSettings, FetchSettings
from citeaudit.layout import warc_files

OUTCOMES = (
    "fetched", "not_modified", "robots_disallowed", "host_denied", "timeout", "dns_error",
    "tls_error", "connection_error", "connection_reset", "bad_response", "too_large",
    "gave_up_after_retries", "retry_scheduled", "skipped_recent_capture", "unsupported_url",
    "redirect_loop", "too_many_redirects", "private_address", "port_refused",
    "rendered", "render_incomplete", "render_failed", "browser_unavailable", "method_refused",
    "request_cap", "robots_reused",
)
"""Outcome names of the live source. ``not_modified``: fetched, payload identical to the last
capture, written as a revisit record. ``retry_scheduled``: an attempt answered 429/503 or reset
that will be tried again. ``too_large``: body cut at ``max_body_bytes`` on the wire or once
decoded (WARC-Truncated). ``private_address``, ``port_refused``, ``host_denied``,
``unsupported_url``: outside the crawl's scope (:mod:`citeaudit.archive.capture.scope`),
nothing sent. Browser capture (``fetch.browser``, :mod:`.browser`): ``rendered`` (the rendered
DOM written), ``render_incomplete`` / ``render_failed`` / ``browser_unavailable`` (no rendered
record: the static capture stands), ``method_refused`` and ``request_cap`` (a sub-request not
sent)."""

RETRY_STATUSES = (429, 503)
FETCHED_RE = r"(^|/)citeaudit-\d{4}-\d{2}-\d{2}-\d{5}\.warc\.gz$"
"""The names of the crawl's own WARC files (relative to raw), for the SQL that tells them
from supplied ones."""


def _origin(url: str) -> str:
    """The soft-404 probe's grouping key of a URL: ``scheme://host:port``."""
    return origin_of(url) or url


def origin_base(url: str) -> str:
    """``scheme://netloc`` of a URL as written (no credentials)."""
    p = urlsplit(strip_credentials(url))
    return f"{p.scheme.lower()}://{p.netloc.lower()}"


def canonical_url(url: str | None, strip: tuple[str, ...]) -> tuple[str | None, str | None]:
    """(canonical URL, SURT key) of a cited URL, or (None, None) when it is not fetchable.

    The alignment's canonicalization (:func:`citeaudit.archive.index.canonicalize`, strict as
    for cited URLs) of the URL without surrounding blanks, with ``strip`` (globs, any case) as
    the tracking parameters: scheme and host lower-cased, default port and fragment dropped,
    empty path ``/``, parameters matching ``strip`` removed.
    """
    if url is None:
        return None, None
    globs = [g.lower() for g in strip]
    canon = canonicalize(strip_credentials(url.strip()), lambda name: any(
        fnmatch.fnmatchcase(name.lower(), g) for g in globs), strict=True)
    return canon.url, canon.key


def cited_table(citations: pa.Table, answers: pa.Table, strip: tuple[str, ...]) -> pa.Table:
    """url, canonical_url, canonical_key, url_error, reference_time per citation."""
    con = duck.connect()
    con.register("citations", citations.select(["answer_id", "url", "retrieved_at"]))
    con.register("answers", answers.select(["answer_id", "observed_at"]))
    refs = duck.query(con, "archive/select_reference_times")
    keyed = {u: canonical_url(u, strip) for u in set(refs.column("url").to_pylist())}
    urls = refs.column("url").to_pylist()
    return pa.table({
        "url": urls,
        "canonical_url": [keyed[u][0] for u in urls],
        "canonical_key": [keyed[u][1] for u in urls],
        "url_error": [None if keyed[u][0] else "invalid_url" for u in urls],
        "reference_time": refs.column("reference_time"),
    })


def plan(cited: pa.Table, known: pa.Table, settings: FetchSettings, now: dt.datetime
         ) -> pa.Table:
    """The fetch plan (see sql/archive/select_fetch_plan.sql)."""
    con = duck.connect()
    con.register("cited", cited)
    con.register("known", known)
    return duck.query(con, "archive/select_fetch_plan", {
        "window_s": settings.reference_window_hours * 3600.0,
        "current_after_s": settings.current_after_days * 86400.0,
        "now": now,
        "fetched_re": FETCHED_RE,
    })


class _Crawler:
    def __init__(self, settings: FetchSettings, writer: FetchWarcWriter,
                 sleep: Callable[[float], None], journal: Path | None = None) -> None:
        self.s = settings
        self.writer = writer
        self.sleep = sleep
        self.ua = settings.user_agent_string(software_version())
        self.gate = HostGate(settings.per_host_delay_seconds, sleep)
        self.pool = ConnectionPool()  # kept-alive connections between a host's requests
        self.log = FetchLog(journal)
        self.scope = scope_from_settings(settings)
        self.robots = RobotsCache(self._fetch_robots)
        self.last: dict[str, tuple[str, str, str]] = {}
        # origin -> a cited URL of it that answered 2xx: the hosts worth a soft-404 probe
        self.probe_wanted: dict[str, str] = {}
        self._probe_lock = threading.Lock()
        # pages to load in the browser once the static crawl is done (fetch.browser)
        self.render_jobs: list[RenderJob] = []

    def _get(self, url: str) -> Attempt:
        s = self.s
        return http_get(url, via=s.via, user_agent=self.ua,
                        connect_timeout=s.connect_timeout_seconds,
                        read_timeout=s.read_timeout_seconds,
                        total_timeout=s.total_timeout_seconds, max_body=s.max_body_bytes,
                        scope=self.scope, pool=self.pool)

    def _polite_get(self, url: str) -> Attempt:
        host = (urlsplit(url).hostname or "").lower()
        with self.gate.slot(host) as defer:
            att = self._get(url)
            if att.retry_after is not None and att.status in RETRY_STATUSES:
                defer(min(att.retry_after, self.s.max_retry_after_seconds))
        return att

    def _fetch_robots(self, url: str) -> Attempt:
        att = self._polite_get(url)
        where = self.writer.write_exchange(att.exchange) if att.exchange else None
        self._record(att, cited_url=None, key=None, purpose="robots", hop=0, attempt=1,
                     where=where, record_type="response" if where else None)
        return att

    def _record(self, att: Attempt, *, cited_url, key, purpose, hop, attempt, where: Written | None,
                record_type: str | None, outcome: str | None = None, detail: str | None = None
                ) -> None:
        self.log.add(
            cited_url=cited_url, canonical_key=key, url=att.url, purpose=purpose, hop=hop,
            attempt=attempt, requested_at=att.started_at, elapsed_ms=att.elapsed_ms,
            outcome=outcome or att.outcome, http_status=att.status,
            bytes=len(att.exchange.body) if att.exchange else None,
            redirect_location=att.location if att.status and 300 <= att.status < 400 else None,
            ip_address=att.exchange.ip_address if att.exchange else None,
            record_type=record_type, warc_file=where.file if where else None,
            warc_offset=where.offset if where else None,
            warc_length=where.length if where else None, detail=detail or att.detail)

    def _refusal(self, url: str) -> tuple[str, str] | None:
        """Why ``url`` is out of the crawl's scope by its text alone (scheme, port, a literal
        address in any spelling, a listed name), before robots.txt is asked; the resolved
        addresses are checked by :func:`http_get` on every request."""
        try:
            host, port, literal = self.scope.check_url(url, resolves=not self.s.via)
            if literal is None and not self.s.via:
                # a name pointing inside is refused here, with its reason, before robots.txt
                # is asked; the connection itself is checked again (no trust in this answer)
                self.scope.resolve(host, port)
        except Refused as exc:
            return exc.outcome, exc.detail
        except (OSError, UnicodeError):
            return None  # the fetch reports the DNS failure as its own outcome
        return None

    def page(self, row: dict) -> None:
        """Fetch one planned page and its redirect hops; every attempt is a log row."""
        cited, key, purpose = row["canonical_url"], row["canonical_key"], row["purpose"]
        url, seen = cited, set()
        for hop in range(self.s.max_redirects + 1):
            seen.add(url)
            now = dt.datetime.now(dt.UTC)
            hop_key = key if hop == 0 else (canonical_url(url, ())[1] or None)
            stub = Attempt(url, "", now, 0)
            refusal = self._refusal(url)
            if refusal is None and not url.lower().startswith(("http://", "https://")):
                refusal = ("unsupported_url", "only absolute http(s) URLs are fetched")
            if refusal is None:
                ok, outcome, why = self.robots.allowed(url)
                if not ok:
                    refusal = (outcome or "robots_disallowed", why or "")
            if refusal is not None:
                self._record(stub, cited_url=cited, key=hop_key, purpose=purpose, hop=hop,
                             attempt=0, where=None, record_type=None, outcome=refusal[0],
                             detail=refusal[1])
                return
            att = self._with_retries(url, cited, hop_key, purpose, hop)
            if att is None:
                return
            loc = att.location
            if not (att.status and 300 <= att.status < 400 and loc):
                if purpose != "probe" and att.status and 200 <= att.status < 300:
                    with self._probe_lock:
                        self.probe_wanted.setdefault(_origin(cited), cited)
                        job = self._render_job(att, cited, key)
                        if job is not None:
                            self.render_jobs.append(job)
                return
            try:
                url = strip_credentials(urljoin(url, loc.strip()))
            except ValueError:
                return
            if url in seen:
                self._record(Attempt(url, "", dt.datetime.now(dt.UTC), 0), cited_url=cited,
                             key=None, purpose=purpose, hop=hop + 1, attempt=0, where=None,
                             record_type=None, outcome="redirect_loop",
                             detail="redirect back to a URL of this chain")
                return
        self._record(Attempt(url, "", dt.datetime.now(dt.UTC), 0), cited_url=cited, key=None,
                     purpose=purpose, hop=self.s.max_redirects + 1, attempt=0, where=None,
                     record_type=None, outcome="too_many_redirects",
                     detail=f"more than {self.s.max_redirects} redirects")

    def _render_job(self, att: Attempt, cited: str, key: str | None) -> RenderJob | None:
        """The browser job for a final 2xx page under ``fetch.browser``: ``always`` any HTML
        page, ``auto`` a page whose static capture is a script shell; None otherwise."""
        if self.s.browser == "never" or att.exchange is None or att.written is None \
                or att.outcome not in ("fetched", "not_modified"):
            return None
        return self.job_for(att.url, att.exchange, att.written, cited, key)

    def job_for(self, url: str, exchange: HttpExchange, written: Written, cited: str,
                key: str | None, earlier: str = "") -> RenderJob | None:
        """The browser job for the static capture ``exchange`` of ``url`` (its record at
        ``written``) under ``fetch.browser``, or None when the mode does not render it.
        ``earlier``: said in the job's reason when the capture is from an earlier crawl."""
        mode = self.s.browser
        if mode == "never":
            return None
        headers = {k.lower(): v for k, v in exchange.response_headers}
        markup = decoded_html(exchange.body, headers.get("content-type"),
                              headers.get("content-encoding"))
        if markup is None:
            return None
        why = "fetch.browser: always"
        if mode == "auto":
            shell = script_shell(markup)
            if shell is None:
                return None
            why = f"fetch.browser: auto; static capture is a script shell ({shell})"
        return RenderJob(url, cited, key, exchange, written, why + earlier)

    def render_all(self) -> None:
        """Load the queued pages in one headless Chromium (:mod:`.browser`), up to
        :data:`RENDER_PAGES` (at most ``concurrency``) at a time."""
        if not self.render_jobs:
            return
        jobs = sorted(self.render_jobs, key=lambda j: (j.cited, j.url))
        exe = find_chromium(self.s.browser_executable)
        missing = None
        try:
            import playwright.sync_api  # noqa: F401 - only to know it is there
        except ImportError:
            missing = ("fetch.browser needs the playwright package (pip install "
                       "'playwright>=1.40'; its browser download is not used) and Debian's "
                       "chromium")
        if missing is not None:
            for j in jobs:
                self._record(Attempt(j.url, "", dt.datetime.now(dt.UTC), 0), cited_url=j.cited,
                             key=j.key, purpose="render", hop=0, attempt=0, where=None,
                             record_type=None, outcome="browser_unavailable", detail=missing)
            return
        if exe is None:
            for j in jobs:
                self._record(Attempt(j.url, "", dt.datetime.now(dt.UTC), 0), cited_url=j.cited,
                             key=j.key, purpose="render", hop=0, attempt=0, where=None,
                             record_type=None, outcome="browser_unavailable",
                             detail=f"fetch.browser_executable {self.s.browser_executable} "
                             "is not an executable file" if self.s.browser_executable
                             else INSTALL_HINT)
            return

        def failed(j: RenderJob, exc: Exception) -> None:
            # a bug must not lose the crawl: log it, go on
            self._record(Attempt(j.url, "", dt.datetime.now(dt.UTC), 0), cited_url=j.cited,
                         key=j.key, purpose="render", hop=0, attempt=0, where=None,
                         record_type=None, outcome="render_failed",
                         detail=f"{type(exc).__name__}: {exc}"[:300])

        renderer = Renderer(self, exe, pages=min(RENDER_PAGES, self.s.concurrency))
        try:
            renderer.render_all(jobs, failed)
        except Exception as exc:  # Chromium would not start
            for j in jobs:
                if id(j) in renderer.started:
                    continue  # its render began: it has its own row
                self._record(Attempt(j.url, "", dt.datetime.now(dt.UTC), 0), cited_url=j.cited,
                             key=j.key, purpose="render", hop=0, attempt=0, where=None,
                             record_type=None, outcome="browser_unavailable",
                             detail=f"{exe} did not start: {type(exc).__name__}: "
                             f"{str(exc).splitlines()[0][:200] if str(exc) else ''}")

    def probe(self, origin: str) -> None:
        """Fetch one random path that cannot exist on ``origin`` (in the directory of a cited
        page there), as a page with purpose ``probe``: same scope, robots and delay; the
        soft-404 check compares the cited pages with it (citeaudit/alignment/soft404.py)."""
        example = self.probe_wanted[origin]
        path = urlsplit(example).path or "/"
        folder = path.rsplit("/", 1)[0] + "/"
        url = f"{origin_base(example)}{folder}{secrets.token_hex(10)}"
        self.page({"canonical_url": url, "canonical_key": None, "purpose": "probe"})

    def _with_retries(self, url, cited, key, purpose, hop) -> Attempt | None:
        """Fetch with bounded retries; archive and log the result. None when nothing archived."""
        for attempt in range(1, self.s.max_retries + 2):
            att = self._polite_get(url)
            retryable = att.status in RETRY_STATUSES or att.outcome == "connection_reset"
            if retryable and attempt <= self.s.max_retries:
                wait = att.retry_after if att.retry_after is not None else \
                    self.s.retry_backoff_seconds * 2 ** (attempt - 1)
                self._record(att, cited_url=cited, key=key, purpose=purpose, hop=hop,
                             attempt=attempt, where=None, record_type=None,
                             outcome="retry_scheduled",
                             detail=f"retry in {min(wait, self.s.max_retry_after_seconds):g} s")
                if att.retry_after is None:
                    self.sleep(min(wait, self.s.max_retry_after_seconds))
                continue
            if retryable:
                self._record(att, cited_url=cited, key=key, purpose=purpose, hop=hop,
                             attempt=attempt, where=None, record_type=None,
                             outcome="gave_up_after_retries")
                return None
            if att.exchange is None:
                self._record(att, cited_url=cited, key=key, purpose=purpose, hop=hop,
                             attempt=attempt, where=None, record_type=None)
                return None
            revisit = None
            if hop == 0 and att.outcome == "fetched":
                revisit = self._same_as_last(att)
            where = self.writer.write_exchange(att.exchange, revisit)
            if purpose == "probe" and hop == 0:
                self.writer.write_metadata(url, where.record_id, [
                    ("citeaudit-probe", "soft-404 probe: a random path that cannot exist"),
                    ("probe-of", origin_base(url)), ("cited-example", self.probe_wanted.get(
                        _origin(url), ""))], att.started_at)
            self._record(att, cited_url=cited, key=key, purpose=purpose, hop=hop,
                         attempt=attempt, where=where,
                         record_type="revisit" if revisit else "response",
                         outcome="not_modified" if revisit else None)
            att.written = where
            if revisit:
                att.outcome = "not_modified"
            return att
        return None

    def _same_as_last(self, att: Attempt) -> tuple[str, str, str] | None:
        prev = self.last.get(att.url)
        if prev is None or att.exchange is None:
            return None
        raw = hashlib.sha1(att.exchange.body).digest()
        digest = "sha1:" + base64.b32encode(raw).decode("ascii")
        return (digest, prev[1], prev[2]) if digest.upper() == prev[0].upper() else None


RENDER_RETRY_OUTCOMES = ("render_incomplete", "render_failed")
"""A render that ended so is not tried again on the same capture by a later crawl (its page
would fail the same way and fetch its sub-requests again each night); ``browser_unavailable``
is: the browser may be there now."""


def stored_exchange(raw: Path, file: str, offset: int) -> tuple[HttpExchange, Written] | None:
    """The response record at ``file`` (relative to raw) ``offset`` as the exchange it was
    written from (status, headers, body as received: content coding kept) and where it lies;
    None when the record is not a readable HTTP response."""
    from warcio.archiveiterator import ArchiveIterator

    path = storage.path(raw) / file
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            rec = next(iter(ArchiveIterator(fh)), None)
            if rec is None or rec.rec_type != "response" or rec.http_headers is None:
                return None
            body = rec.raw_stream.read()
            h = rec.rec_headers
            fetched_at = dt.datetime.fromisoformat(h.get_header("WARC-Date"))
            http = rec.http_headers
            ex = HttpExchange(url=h.get_header("WARC-Target-URI"), request_line="",
                              request_headers=[], status_line=http.statusline,
                              response_headers=list(http.headers), protocol=http.protocol,
                              body=body, ip_address=h.get_header("WARC-IP-Address"),
                              fetched_at=fetched_at)
            return ex, Written(file, offset, 0, h.get_header("WARC-Record-ID"))
    except (OSError, ValueError, TypeError):
        return None


def render_backlog(crawler: _Crawler, skipped: list[dict], known: pa.Table, raw: Path,
                   observation_date: str) -> list[RenderJob]:
    """Browser jobs for pages this crawl skips (a recent capture exists) whose final capture,
    taken statically by an earlier crawl of the date before ``fetch.browser`` was on, has no
    rendered DOM yet (``sql/archive/select_render_backlog.sql``): the skipped URL's redirect
    hops are followed through the newest captures to the final one; a 2xx ``response`` of
    ours is rendered when the mode asks for it (``auto``: its text is a shell; ``always``: any
    HTML page). Nothing is fetched again but the sub-requests the browser makes (each through
    the crawl's scope, robots and per-host delay), nothing is overwritten: the rendered DOM is
    a new record. A capture whose render failed or was incomplete before
    (:data:`RENDER_RETRY_OUTCOMES`) is not tried again; supplied WARCs and revisits are not
    rendered (their sub-resources are not ours to fetch now, or the body is elsewhere)."""
    if crawler.s.browser == "never" or not skipped or known.num_rows == 0:
        return []
    con = duck.connect()
    con.register("known", known)
    newest = {r["urlkey"]: r for r in duck.query(con, "archive/select_render_backlog", {
        "fetched_re": FETCHED_RE,
        "prefix": RENDERED_URN}).to_pylist()}
    from citeaudit.archive.capture.fetch_log import read_logs

    failed = {(r["url"], r["requested_at"]) for r in read_logs(raw, observation_date).to_pylist()
              if r["purpose"] == "render" and r["outcome"] in RENDER_RETRY_OUTCOMES}
    jobs: list[RenderJob] = []
    for row in skipped:
        cap = newest.get(row["canonical_key"])
        for _ in range(crawler.s.max_redirects):
            if cap is None or not (cap["http_status"] and 300 <= cap["http_status"] < 400
                                   and cap["redirect_location"]):
                break
            try:
                nxt = urljoin(cap["target_uri"], cap["redirect_location"].strip())
            except ValueError:
                cap = None
                break
            cap = newest.get(canonical_url(nxt, ())[1] or "")
        if cap is None or cap["rendered"] or cap["record_type"] != "response" \
                or not (cap["http_status"] and 200 <= cap["http_status"] < 300):
            continue
        if any(u == cap["target_uri"] and at is not None and at >= cap["capture_time"]
               for u, at in failed):
            continue
        stored = stored_exchange(raw, cap["file"], cap["offset"])
        if stored is None:
            continue
        job = crawler.job_for(cap["target_uri"], *stored, row["canonical_url"],
                              row["canonical_key"],
                              f"; captured statically by an earlier crawl at "
                              f"{cap['warc_date_raw']}")
        if job is not None:
            jobs.append(job)
    return jobs


def _normal_digest(d: str | None) -> str | None:
    if not d:
        return None
    return "sha1:" + (d.split(":", 1)[1] if ":" in d else d)


def crawl(plan_rows: pa.Table, settings: FetchSettings, raw: Path, observation_date: str, *,
          now: dt.datetime | None = None, sleep: Callable[[float], None] | None = None,
          progress: Callable[[int, int], None] | None = None,
          journal_dir: Path | None = None, known: pa.Table | None = None) -> CrawlResult:
    """Fetch the planned pages (see the module docstring); never raises for a bad page.
    ``journal_dir``: where the rows are also journaled as they happen (a killed crawl's log
    survives, :mod:`citeaudit.archive.capture.resume`); the caller removes the journal once the
    log is written (``result.journal``). ``known``: the capture index the plan was made from;
    with ``fetch.browser`` on, the skipped pages' static captures that still want a browser
    are rendered too (:func:`render_backlog`)."""
    import time

    now = now or dt.datetime.now(dt.UTC)
    crawl_date = now.astimezone(dt.UTC).date().isoformat()
    ua = settings.user_agent_string(software_version())
    writer = FetchWarcWriter(raw, crawl_date, observation_date, max_bytes=settings.warc_max_bytes,
                             info=default_info(settings.operator, settings.contact, ua,
                                               settings.via))
    journal = None
    if journal_dir is not None:
        import os

        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
        journal = journal_dir / f"{stamp}-{os.getpid()}{JOURNAL_SUFFIX}"
    crawler = _Crawler(settings, writer, sleep or time.sleep, journal)
    memory = RobotsMemory.load(raw, settings.robots_max_age_hours, now)
    crawler.robots = RobotsCache(memory.fetcher(crawler._fetch_robots, crawler.log))
    rows = plan_rows.to_pylist()
    crawler.last = {r["canonical_url"]: (_normal_digest(r["last_digest"]), r["last_uri"],
                                         r["last_time"].strftime("%Y-%m-%dT%H:%M:%SZ"))
                    for r in rows if r["last_digest"] and r["last_time"]}
    todo: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        if r["purpose"] == "skip":
            crawler.log.add(cited_url=r["canonical_url"], canonical_key=r["canonical_key"],
                            url=r["canonical_url"], purpose="skip", hop=0, attempt=0,
                            outcome="skipped_recent_capture",
                            detail=f"newest readable capture {r['newest_capture_time']}")
        else:
            todo[(urlsplit(r["canonical_url"]).hostname or "").lower()].append(r)
    total = sum(len(v) for v in todo.values())
    done = [0]
    lock = threading.Lock()

    def run_host(pages: Iterable[dict]) -> None:
        pages = list(pages)
        for r in pages:
            try:
                crawler.page(r)
            except Exception as exc:  # a bug must not lose the page: log it, go on
                crawler.log.add(cited_url=r["canonical_url"], canonical_key=r["canonical_key"],
                                url=r["canonical_url"], purpose=r["purpose"], hop=0, attempt=0,
                                outcome="internal_error", detail=f"{type(exc).__name__}: {exc}")
            with lock:
                done[0] += 1
                if progress:
                    progress(done[0], total)
        if settings.soft_404_probe:
            origins = sorted({_origin(r["canonical_url"]) for r in pages})
            for o in origins:
                if o in crawler.probe_wanted:
                    try:
                        crawler.probe(o)
                    except Exception as exc:  # a bug must not lose the crawl: log it, go on
                        crawler.log.add(cited_url=o, url=o, purpose="probe", hop=0, attempt=0,
                                        outcome="internal_error",
                                        detail=f"{type(exc).__name__}: {exc}")

    try:
        with ThreadPoolExecutor(max_workers=settings.concurrency) as pool:
            for f in [pool.submit(run_host, todo[h]) for h in sorted(todo)]:
                f.result()
        if known is not None:
            skipped = [r for r in rows if r["purpose"] == "skip"]
            crawler.render_jobs += render_backlog(crawler, skipped, known, raw,
                                                  observation_date)
        crawler.render_all()
    finally:
        crawler.pool.close()
        files = writer.close()
        memory.save(raw)
    result = CrawlResult(crawler.log.table(), files)
    result.journal = crawler.log
    return result


def known_captures(raw: Path, observation_date: str, days: int = 2) -> pa.Table:
    """The capture index of the supplied WARCs of the crawl dates within ``days`` of the date
    and of every fetched WARC of that date: what the plan compares against."""
    day = dt.date.fromisoformat(observation_date)
    files: list[Path] = []
    for k in range(-days, days + 1):
        d = (day + dt.timedelta(days=k)).isoformat()
        files += [f for f in warc_files(raw, d) if not is_fetched_file(f)]
    files += fetched_files(raw, observation_date)
    raw = storage.path(raw)
    return index_paths([(f, f.relative_to(raw).as_posix()) for f in files], workers=1)


def archive_date(raw: Path, observation_date: str, citations: pa.Table, answers: pa.Table,
                 settings: FetchSettings, *, now: dt.datetime | None = None,
                 sleep: Callable[[float], None] | None = None,
                 progress: Callable[[int, int], None] | None = None,
                 archives: tuple[ArchiveSettings, ...] = (), live: bool = True) -> CrawlResult:
    """Plan and crawl one observation date (``live``), then ask ``archives`` for the pages
    still without a readable capture in the reference window (:func:`lookup_archives`);
    the log is also kept under ``raw/fetch_logs``."""
    if storage.is_remote(raw):
        raise storage.StorageError(
            f"{storage.uri(raw)}/citeaudit.yaml enables fetch: or lists archives:, but "
            "capture writes its WARCs and logs into a local raw folder: crawl into a local raw "
            "folder and copy it to object storage, or set fetch.enabled: false")
    now = now or dt.datetime.now(dt.UTC)
    cited = cited_table(citations, answers, settings.strip_params)
    journal = None
    if live:
        # a killed crawl of this date: its complete records and its log are kept, so the plan
        # below does not fetch those pages again
        recover(raw, observation_date)
        known = known_captures(raw, observation_date)
        todo = plan(cited, known, settings, now)
        result = crawl(todo, settings, raw, observation_date, now=now, sleep=sleep,
                       progress=progress,
                       journal_dir=storage.path(raw) / LOG_FOLDER / observation_date,
                       known=known)
        journal = result.journal
    else:
        result = CrawlResult(FETCH_LOG_SCHEMA.empty_table(), [])
    if archives:
        todo = plan(cited, known_captures(raw, observation_date), settings, now)
        more = lookup_archives(todo, archives, settings, raw, observation_date, now=now,
                               sleep=sleep, progress=progress)
        result = CrawlResult(pa.concat_tables([result.log, more.log]), result.files + more.files)
    bad = sorted({u for u, e in zip(cited.column("url").to_pylist(),
                                    cited.column("url_error").to_pylist(), strict=True) if e},
                 key=lambda u: u or "")
    if bad:
        rows = [dict.fromkeys(FETCH_LOG_SCHEMA.names) | {
            "cited_url": strip_credentials(u), "url": strip_credentials(u),
            "purpose": "reference", "hop": 0, "attempt": 0,
            "outcome": "unsupported_url", "detail": "not an absolute http(s) URL"} for u in bad]
        result.log = pa.concat_tables([result.log, pa.Table.from_pylist(rows, FETCH_LOG_SCHEMA)])
    write_log(raw, observation_date, result.log, now)
    if journal is not None:
        journal.close_journal()
    return result
