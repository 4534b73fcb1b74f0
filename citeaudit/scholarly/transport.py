"""HTTP for the registry clients: one ``requests.Session`` with everything politeness needs.

crossrefapi and pyalex both hard-code their hosts (``https://api.crossref.org`` in
``crossref.restful.build_url_endpoint``, ``https://api.openalex.org`` in pyalex's ``url``
property), pyalex mounts its retries for ``https://`` only and sets no timeout, and crossrefapi
calls ``requests.get`` at module level. Rather than patching either library, both are handed a
:class:`RegistrySession` that

- rewrites the official origin to a configured base URL (a mirror, or the loopback server of
  the tests and the demo): one place, both libraries;
- mounts a :class:`TimeoutAdapter` for ``http://`` *and* ``https://`` with bounded retries and
  exponential backoff on 429/500/502/503/504 and on connect/read errors (``Retry-After`` is
  honoured, capped), and a default timeout for every request;
- waits on a :class:`RateLimiter` before every request (so concurrency is bounded by the rate
  limit, not by luck), adds ``mailto`` for the polite pools, and counts requests and attempts.
  Single-record requests (``/works/{id}``) and list requests (``/works?filter=…``, searches)
  have limiters of their own, as Crossref's pools give them different rates; a rate the
  server announces (``X-Rate-Limit-Limit`` per ``X-Rate-Limit-Interval``) lowers the
  configured one for that kind of request, never raises it;
- remembers the last final response (per thread), so a caller can tell a 404 from a 429 or
  invalid JSON whatever the library made of it;
- after ``UNREACHABLE_AFTER`` consecutive connection failures (retries spent), gives up on the
  registry: every later request fails at once with ``registry_unreachable`` (one warning), not
  minutes of timeouts per lookup.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.util import Retry

RETRY_STATUSES = (429, 500, 502, 503, 504)
UNREACHABLE_AFTER = 3
UNREACHABLE = "registry_unreachable"
# Per response: the body is read within BODY_DEADLINE seconds in all (the request timeout
# bounds each read, not a body trickled a byte at a time) and up to MAX_BODY_BYTES; a JSON body
# nested deeper than MAX_JSON_DEPTH is refused before a library parses it (docs/limits.md).
BODY_DEADLINE = 30.0
MAX_BODY_BYTES = 20 * 1024 * 1024
MAX_JSON_DEPTH = 64
BODY_CHUNK = 64 * 1024


class BodyTimeout(requests.Timeout):
    """A registry body that did not arrive within the body deadline (a trickling server)."""


class BodyTooLarge(requests.RequestException):
    """A registry body larger than :data:`MAX_BODY_BYTES`."""


class JsonTooDeep(ValueError):
    """A registry body nested deeper than :data:`MAX_JSON_DEPTH`: the lookup is ``invalid``
    (``invalid_body:JsonTooDeep``), so its verdict is unresolved, never a crash."""


log = logging.getLogger("citeaudit.scholarly")


class RateLimiter:
    """At most ``per_second`` request starts per second, across threads (a spacing limiter)."""

    def __init__(self, per_second: float) -> None:
        self.configured = per_second
        self.interval = 1.0 / per_second if per_second > 0 else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    @property
    def per_second(self) -> float:
        """The rate in force (0: unlimited)."""
        return 1.0 / self.interval if self.interval else 0.0

    def cap(self, announced: float) -> None:
        """Obey a rate the server announced: the lower of it and the configured rate."""
        if announced <= 0:
            return
        rate = min(announced, self.configured) if self.configured > 0 else announced
        with self._lock:
            self.interval = 1.0 / rate

    def ready_in(self) -> float:
        """Seconds until the next request may start (0: now); a peek, reserving nothing."""
        with self._lock:
            return max(0.0, self._next - time.monotonic())

    def wait(self) -> None:
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            time.sleep(start - now)


class CappedRetry(Retry):
    """urllib3's Retry, with a server's ``Retry-After`` capped (a mirror could ask for hours)."""

    DEFAULT_BACKOFF_MAX = 30.0
    retry_after_cap: float = 30.0

    def get_retry_after(self, response):  # type: ignore[override]
        value = super().get_retry_after(response)
        return None if value is None else min(value, self.retry_after_cap)


class TimeoutAdapter(HTTPAdapter):
    """An HTTPAdapter with a default timeout, counting every request sent and every attempt."""

    def __init__(self, timeout: float, retries: Retry, stats: RequestStats) -> None:
        self.timeout = timeout
        self.stats = stats
        super().__init__(max_retries=retries)

    def send(self, request, **kwargs):  # type: ignore[override]
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = self.timeout
        self.stats.add(requests=1)
        try:
            response = super().send(request, **kwargs)
        except requests.RequestException:
            self.stats.add(attempts=1 + self.max_retries.total)  # every allowed try was spent
            raise
        history = getattr(getattr(response.raw, "retries", None), "history", ()) or ()
        self.stats.add(attempts=1 + len(history))
        return response


@dataclass
class RequestStats:
    """Requests sent by the clients (logical) and attempts on the wire (with retries)."""

    requests: int = 0
    attempts: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _local: threading.local = field(default_factory=threading.local, repr=False,
                                    compare=False)

    def add(self, requests: int = 0, attempts: int = 0) -> None:
        with self._lock:
            self.requests += requests
            self.attempts += attempts
        self._local.requests = getattr(self._local, "requests", 0) + requests

    def mine(self) -> int:
        """Requests sent so far by the calling thread (a delta of it counts one caller's
        requests while other threads use the same session)."""
        return getattr(self._local, "requests", 0)


_INTERVAL = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*s?\s*$")


def announced_rate(headers) -> float | None:
    """Requests per second from ``X-Rate-Limit-Limit`` / ``X-Rate-Limit-Interval`` (e.g.
    ``50`` per ``1s``), or None when absent or unreadable."""
    limit, interval = headers.get("X-Rate-Limit-Limit"), headers.get("X-Rate-Limit-Interval")
    if limit is None or interval is None:
        return None
    m = _INTERVAL.match(str(interval))
    try:
        count = float(limit)
    except ValueError:
        return None
    if m is None or count <= 0 or float(m.group(1)) <= 0:
        return None
    return count / float(m.group(1))


def is_list_request(url: str) -> bool:
    """A list request (``/works?filter=…`` or a search) rather than one record by id."""
    return urlsplit(str(url)).path.rstrip("/").rsplit("/", 1)[-1] == "works"


@dataclass(frozen=True)
class LastResponse:
    """The final response of the last request (status and body), or the error that ended it."""

    status: int | None
    body: bytes | None
    error: str = ""


class RegistrySession(requests.Session):
    """A session that sends a registry's official URLs to ``base_url`` (see module doc)."""

    def __init__(self, official: str, base_url: str, *, timeout: float = 10.0,
                 max_retries: int = 3, backoff: float = 0.5, backoff_max: float = 10.0,
                 per_second: float = 5.0, list_per_second: float | None = None,
                 mailto: str | None = None, user_agent: str = "citeaudit",
                 body_deadline: float = BODY_DEADLINE,
                 max_body_bytes: int = MAX_BODY_BYTES) -> None:
        super().__init__()
        self.body_deadline = body_deadline
        self.max_body_bytes = max_body_bytes
        self.official = official.rstrip("/")
        self.base_url = (base_url or official).rstrip("/")
        self.stats = RequestStats()
        self.limiter = RateLimiter(per_second)
        self.list_limiter = RateLimiter(per_second if list_per_second is None
                                        else list_per_second)
        self._local = threading.local()
        self.consecutive_failures = 0
        retries = CappedRetry(
            total=max_retries, connect=max_retries, read=max_retries, status=max_retries,
            backoff_factor=backoff, backoff_max=backoff_max, status_forcelist=RETRY_STATUSES,
            allowed_methods=frozenset({"GET", "HEAD"}), respect_retry_after_header=True,
            raise_on_status=False,
        )
        retries.retry_after_cap = backoff_max
        adapter = TimeoutAdapter(timeout, retries, self.stats)
        self.mount("http://", adapter)
        self.mount("https://", adapter)
        self.headers["User-Agent"] = f"{user_agent} (mailto:{mailto})" if mailto else user_agent
        if mailto:
            self.params = {"mailto": mailto}

    def rebase(self, url: str) -> str:
        """The URL with the official origin replaced by the configured base."""
        url = str(url)
        if url.startswith(self.official):
            return self.base_url + url[len(self.official):]
        return url

    @property
    def last(self) -> LastResponse | None:
        """The final response of this thread's last request."""
        return getattr(self._local, "last", None)

    @last.setter
    def last(self, value: LastResponse | None) -> None:
        self._local.last = value

    @property
    def unreachable(self) -> bool:
        """True once the registry failed ``UNREACHABLE_AFTER`` connections in a row."""
        return self.consecutive_failures >= UNREACHABLE_AFTER

    def request(self, method, url, *args, **kwargs):  # type: ignore[override]
        if self.unreachable:
            self.last = LastResponse(None, None, UNREACHABLE)
            raise requests.ConnectionError(f"{UNREACHABLE}: {self.base_url}")
        limiter = self.list_limiter if is_list_request(url) else self.limiter
        limiter.wait()
        self.last = None
        kwargs["stream"] = True  # the body is read here, within the deadline and size cap
        try:
            response = super().request(method, self.rebase(url), *args, **kwargs)
            self._read_body(response)
        except requests.RequestException as exc:
            kind = "timeout" if isinstance(exc, requests.Timeout) else "connection"
            self.last = LastResponse(None, None, f"{kind}:{type(exc).__name__}")
            self.consecutive_failures += 1
            if self.unreachable:
                log.warning("%s unreachable after %d consecutive connection failures (last: "
                            "%s); its remaining lookups are unresolved (%s)", self.base_url,
                            UNREACHABLE_AFTER, type(exc).__name__, UNREACHABLE)
            raise
        self.consecutive_failures = 0
        announced = announced_rate(response.headers)
        if announced is not None:
            limiter.cap(announced)
        self.last = LastResponse(response.status_code, response.content)
        if response.status_code == 200 and _too_deep(response.content):
            self.last = LastResponse(200, response.content, "too_deep")
            raise JsonTooDeep(f"{url}: JSON nested deeper than {MAX_JSON_DEPTH} levels")
        return response

    def _read_body(self, response: requests.Response) -> None:
        """Read the body into ``response`` within :attr:`body_deadline` seconds in all and
        :attr:`max_body_bytes`; :class:`BodyTimeout` / :class:`BodyTooLarge` otherwise.

        Each socket read is bounded by the request timeout, but a server trickling a byte at a
        time never lets one expire: a timer shuts the socket down at the deadline, which ends
        the blocked read."""
        end = time.monotonic() + self.body_deadline
        timer = threading.Timer(self.body_deadline, _shutdown, args=(response,))
        timer.daemon = True
        timer.start()
        chunks, size = [], 0
        try:
            for chunk in response.iter_content(BODY_CHUNK):
                size += len(chunk)
                if size > self.max_body_bytes:
                    raise BodyTooLarge(f"{response.url}: body larger than "
                                       f"{self.max_body_bytes:,} bytes")
                chunks.append(chunk)
                if time.monotonic() > end:
                    break
        except BodyTooLarge:
            response.close()
            raise
        except Exception as exc:
            if time.monotonic() < end:
                raise
            raise BodyTimeout(f"{response.url}: body not read within {self.body_deadline:g} s"
                              ) from exc
        finally:
            timer.cancel()
        if time.monotonic() > end:
            response.close()
            raise BodyTimeout(f"{response.url}: body not read within {self.body_deadline:g} s")
        response._content = b"".join(chunks)  # what requests' own .content would hold
        response._content_consumed = True


def _shutdown(response: requests.Response) -> None:
    """End a blocked read of ``response``: shut its socket down (close alone does not wake a
    thread blocked in recv)."""
    import socket

    conn = getattr(response.raw, "_connection", None)
    sock = getattr(conn, "sock", None)
    if sock is None:  # urllib3 detaches the connection once it is released; http.client's
        fp = getattr(getattr(response.raw, "_fp", None), "fp", None)
        sock = getattr(getattr(fp, "raw", None), "_sock", None)
    try:
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    response.close()


def _too_deep(body: bytes | None) -> bool:
    """Whether a JSON body nests deeper than :data:`MAX_JSON_DEPTH` (a body that is not JSON is
    the libraries' to refuse)."""
    if not body or body.count(b"[") + body.count(b"{") <= MAX_JSON_DEPTH:
        return False
    from citeaudit.untrusted import depth

    try:
        return depth(json.loads(body)) > MAX_JSON_DEPTH
    except RecursionError:
        return True
    except ValueError:
        return False
