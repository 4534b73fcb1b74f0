"""Browser capture: a page a script renders, loaded in headless Chromium, every byte it loads
fetched by the crawler itself and archived, and the rendered DOM kept as its own record.

Why: a static fetch of a script-rendered page captures a shell (:mod:`.shell`); its text holds
none of the cited content. With ``fetch.browser: auto`` the crawl renders the pages whose static
capture is a shell, with ``always`` every 2xx HTML page it captured (``never``, the default,
renders nothing).

How (one Chromium for the crawl, Debian's ``chromium`` driven by Playwright with
``executable_path``: Playwright's own browser downloads are never used):

- the page is opened at its final URL and *every* request Chromium makes is intercepted
  (``context.route``): the document itself is answered from the static capture already in the
  WARC (it is not fetched twice); each sub-request goes through the crawl's own scope checks
  (scheme, port, private networks, host lists), robots.txt of its host, the per-host delay and
  the fetcher's size and time caps with the same User-Agent, is written to the WARC as a
  ``response`` + ``request`` pair with the real status and headers, logged in ``fetch_log``
  (purpose ``subresource``) and handed to Chromium; a refused one is aborted and logged with its
  refusal (``host_denied``, ``private_address``, ``robots_disallowed``, ...), nothing sent;
  only GET is fetched (``method_refused``), at most ``fetch.browser_max_requests`` per page
  (``request_cap``);
- nothing can leave Chromium any other way: it runs with a dead proxy
  (``--proxy-server=127.0.0.1:9``), a resolver that resolves nothing, WebRTC limited to the
  proxy, background networking and service workers off — an intercepted request never reaches
  the network, anything else fails;
- once the page has loaded and the network has been idle, the DOM is serialized and written as
  a ``resource`` record ``urn:rendered-dom:<url>`` with the WARC-Date of the document's response
  (:meth:`FetchWarcWriter.write_rendered`) plus a ``metadata`` record describing the render;
  ``fetch_log`` gets a row with purpose ``render`` and outcome ``rendered``. The alignment
  reads that record's text in place of the response's (``capture_fidelity`` ``rendered``).

Fail closed: a render that does not finish inside ``fetch.browser_timeout_seconds`` or whose
network never goes idle, a page whose document, script, XHR or fetch sub-request was refused
or failed, or one a script navigates elsewhere (a script redirect: what renders is another
page), leaves no rendered record (``render_incomplete``, ``render_failed``): a partial DOM
could lack the quote and read as "not in page"; the shell stays unresolved instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import os
import shutil
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from citeaudit.archive.capture.scope import strip_credentials
from citeaudit.archive.capture.warc_writer import HttpExchange, Written

ESSENTIAL_TYPES = ("document", "script", "xhr", "fetch", "eventsource")
"""Sub-request kinds a page's content may depend on: one refused or failed makes the render
incomplete (images, fonts, stylesheets and media do not)."""

CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
    "--proxy-server=http://127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--no-first-run", "--disable-domain-reliability", "--metrics-recording-only",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--force-webrtc-ip-handling-policy",
]
"""Chromium's flags: no network of its own (see the module docstring)."""

_HOP_BY_HOP = {"content-length", "transfer-encoding", "x-archive-orig-transfer-encoding",
               "connection", "keep-alive", "content-encoding"}


def find_chromium(configured: str | None) -> str | None:
    """The Chromium to drive: ``fetch.browser_executable`` when set (only it: a configured
    path that is not there is no reason to drive another browser), else $CITEAUDIT_CHROMIUM,
    else ``chromium`` / ``chromium-browser`` on PATH; None when there is none."""
    candidates = (configured,) if configured else (
        os.environ.get("CITEAUDIT_CHROMIUM"), "chromium", "chromium-browser")
    for candidate in candidates:
        if candidate:
            found = shutil.which(candidate) or (candidate if os.path.isfile(candidate)
                                                and os.access(candidate, os.X_OK) else None)
            if found:
                return found
    return None


INSTALL_HINT = ("no Chromium found: install Debian's package (apt-get install chromium) or set "
                "fetch.browser_executable in citeaudit.yaml")


@dataclass
class RenderJob:
    """A page to render: its final URL, the static exchange and where its record landed."""

    url: str
    cited: str
    key: str | None
    exchange: HttpExchange
    written: Written
    why: str


@dataclass
class _PageState:
    requests: int = 0
    fetched: int = 0
    refused: int = 0
    essential_missing: list[str] = field(default_factory=list)
    main_served: bool = False
    navigated_to: str | None = None


def _decoded(body: bytes, headers: list[tuple[str, str]]) -> tuple[bytes, bool]:
    """The body with its content coding undone for Chromium (and whether it was undone)."""
    from citeaudit.archive.capture.shell import decoded_html

    enc = next((v for k, v in headers if k.lower() == "content-encoding"), None)
    if not enc or enc.strip().lower() == "identity":
        return body, True
    text = decoded_html(body, "text/html; charset=latin-1", enc)
    return (text.encode("latin-1"), True) if text is not None else (body, False)


def _fulfil_args(ex: HttpExchange) -> dict[str, Any]:
    body, undone = _decoded(ex.body, ex.response_headers)
    headers: dict[str, str] = {}
    for k, v in ex.response_headers:
        low = k.lower()
        if low in _HOP_BY_HOP and (undone or low != "content-encoding"):
            continue
        headers[k] = f"{headers[k]}, {v}" if k in headers and low != "set-cookie" else v
    status = int(ex.status_line.split(" ", 1)[0])
    return {"status": status, "headers": headers, "body": body}


RENDER_PAGES = 4
"""Pages rendered at once in the crawl's one Chromium (each in its own browser context), at
most ``fetch.concurrency``: the render waits mostly on the network going idle, so a few pages
overlap well; more would cost memory (each page is a renderer process) for little."""


class Renderer:
    """One headless Chromium for a crawl; :meth:`render_all` loads the pages, up to ``pages``
    at once (see module docstring).

    ``crawler`` is the live crawl (:class:`citeaudit.archive.capture.crawl._Crawler`): its scope
    refusal, robots cache, polite GET, WARC writer and log are used for every sub-request; they
    block (DNS, the per-host delay, the network), so they run on a small thread pool while the
    event loop drives the pages. The per-host delay is the crawl's :class:`HostGate`, shared
    by every page and thread: rendering pages of one host at once sends nothing sooner."""

    def __init__(self, crawler: Any, executable: str, pages: int = 1) -> None:
        self.c = crawler
        self.s = crawler.s
        self.executable = executable
        self.pages = max(1, pages)
        self.started: set[int] = set()  # id() of the jobs a render began for
        self._browser: Any = None
        self._io: ThreadPoolExecutor | None = None

    def render_all(self, jobs: list[RenderJob],
                   on_error: Callable[[RenderJob, Exception], None]) -> None:
        """Render ``jobs`` in one Chromium, at most ``pages`` at a time; a job whose render
        raises is handed to ``on_error`` (the others go on). Raises when Chromium does not
        start (nothing rendered then)."""
        asyncio.run(self._main(jobs, on_error))

    async def _main(self, jobs: list[RenderJob],
                    on_error: Callable[[RenderJob, Exception], None]) -> None:
        from playwright.async_api import async_playwright

        async with async_playwright() as pw:
            self._browser = await pw.chromium.launch(executable_path=self.executable,
                                                     headless=True, args=CHROMIUM_ARGS)
            try:
                with ThreadPoolExecutor(max_workers=2 * self.pages,
                                        thread_name_prefix="render-io") as io:
                    self._io = io
                    gate = asyncio.Semaphore(self.pages)

                    async def one(job: RenderJob) -> None:
                        async with gate:
                            self.started.add(id(job))
                            try:
                                await self.render(job)
                            except Exception as exc:  # a bug must not lose the other pages
                                on_error(job, exc)

                    await asyncio.gather(*(one(j) for j in jobs))
            finally:
                await self._browser.close()

    async def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` on the blocking-work threads."""
        return await asyncio.get_running_loop().run_in_executor(self._io, fn, *args)

    def _log(self, job: RenderJob, url: str, purpose: str, outcome: str, *,
             att: Any = None, where: Written | None = None, detail: str | None = None,
             record_type: str | None = None) -> None:
        from citeaudit.archive.capture.fetcher import Attempt

        att = att or Attempt(url, outcome, dt.datetime.now(dt.UTC), 0)
        self.c._record(att, cited_url=job.cited, key=job.key if purpose == "render" else None,
                       purpose=purpose, hop=0, attempt=1 if purpose == "subresource" else 0,
                       where=where, record_type=record_type, outcome=outcome, detail=detail)

    def _check(self, url: str) -> tuple[str, str] | None:
        """Why a sub-request to ``url`` is not sent (scope, scheme, robots.txt), or None."""
        refusal = self.c._refusal(url)
        if refusal is None and not url.lower().startswith(("http://", "https://")):
            refusal = ("unsupported_url", "only absolute http(s) URLs are fetched")
        if refusal is None:
            ok, outcome, why = self.c.robots.allowed(url)
            if not ok:
                refusal = (outcome or "robots_disallowed", why or "")
        return refusal

    def _handler(self, job: RenderJob, page: Any, state: _PageState):
        async def handle(route: Any, request: Any) -> None:
            url = strip_credentials(request.url.split("#", 1)[0])
            kind = request.resource_type
            main_nav = request.is_navigation_request() and request.frame == page.main_frame
            if main_nav and not state.main_served:
                # the page itself (whatever Chromium's spelling of its URL): the static capture
                state.main_served = True
                await route.fulfill(**_fulfil_args(job.exchange))
                return
            if main_nav:
                # a script sent the page elsewhere: what renders is not the cited page
                state.navigated_to = state.navigated_to or url
                state.essential_missing.append(f"the page navigated to {url}")

            async def refuse(outcome: str, detail: str, abort: str = "blockedbyclient") -> None:
                state.refused += 1
                if kind in ESSENTIAL_TYPES:
                    state.essential_missing.append(f"{kind} {url}: {outcome}")
                self._log(job, url, "subresource", outcome, detail=detail)
                await route.abort(abort)

            if request.method != "GET":
                return await refuse("method_refused", f"{request.method} {kind}: only GET is "
                                    "fetched")
            if state.requests >= self.s.browser_max_requests:
                return await refuse("request_cap", f"more than {self.s.browser_max_requests} "
                                    "sub-requests (fetch.browser_max_requests)")
            state.requests += 1
            refusal = await self._call(self._check, url)
            if refusal is not None:
                return await refuse(*refusal)
            att = await self._call(self.c._polite_get, url)
            if att.exchange is None:
                state.refused += 1
                if kind in ESSENTIAL_TYPES:
                    state.essential_missing.append(f"{kind} {url}: {att.outcome}")
                self._log(job, url, "subresource", att.outcome, att=att)
                await route.abort("failed")
                return
            where = self.c.writer.write_exchange(att.exchange)
            self._log(job, url, "subresource", att.outcome, att=att, where=where,
                      record_type="response")
            state.fetched += 1
            if att.outcome == "too_large" and kind in ESSENTIAL_TYPES:
                state.essential_missing.append(f"{kind} {url}: too_large")
            await route.fulfill(**_fulfil_args(att.exchange))

        async def guarded(route: Any, request: Any) -> None:
            try:
                await handle(route, request)
            except Exception as exc:  # the page closed under it, or a bug: never a hang
                state.essential_missing.append(
                    f"{request.resource_type} {request.url}: {type(exc).__name__}")
                with contextlib.suppress(Exception):
                    await route.abort("failed")
        return guarded

    async def render(self, job: RenderJob) -> None:
        """Render one page; writes its rendered record and log rows (never raises for a
        page: a failure is a ``render_failed`` row)."""
        assert self._browser is not None
        t0 = time.monotonic()
        budget_ms = self.s.browser_timeout_seconds * 1000.0
        state = _PageState()
        ctx = await self._browser.new_context(user_agent=self.c.ua, service_workers="block",
                                              accept_downloads=False,
                                              viewport={"width": 1280, "height": 1024})
        try:
            page = await ctx.new_page()
            await ctx.route("**/*", self._handler(job, page, state))
            try:
                await page.goto(job.url, wait_until="load", timeout=budget_ms)
                left = budget_ms - (time.monotonic() - t0) * 1000.0
                await page.wait_for_load_state("networkidle", timeout=max(1.0, left))
                html = await page.content()
            except Exception as exc:  # Playwright's TimeoutError, a crashed page
                name = type(exc).__name__
                outcome = "render_incomplete" if "Timeout" in name else "render_failed"
                self._log(job, job.url, "render", outcome,
                          detail=f"{name}: {str(exc).splitlines()[0][:200]} (after "
                          f"{time.monotonic() - t0:.1f} s; fetch.browser_timeout_seconds)")
                return
            if state.essential_missing:
                self._log(job, job.url, "render", "render_incomplete",
                          detail="not rendered from the whole page: "
                          + "; ".join(state.essential_missing[:3]))
                return
            rendered_at = dt.datetime.now(dt.UTC)
            where = self.c.writer.write_rendered(job.url, html, job.exchange.fetched_at,
                                                 job.written.record_id, [
                ("citeaudit-render", "the DOM headless Chromium built from this page"),
                ("rendered-at", rendered_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")),
                ("why", job.why), ("browser", f"chromium {self._browser.version}"),
                ("sub-requests-fetched", str(state.fetched)),
                ("sub-requests-refused", str(state.refused)),
                ("document-record", job.written.record_id)])
            self._log(job, job.url, "render", "rendered", where=where, record_type="resource",
                      detail=f"{job.why}; {state.fetched} sub-requests fetched, "
                      f"{state.refused} refused, {time.monotonic() - t0:.1f} s")
        finally:
            await ctx.close()
