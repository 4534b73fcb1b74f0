"""One polite HTTP GET, recorded as sent and received, and the per-host politeness around it.

Why not ``requests``: a WARC must hold the request as sent and the response as received (status
line, headers in order, the peer's IP address), a body cut at a size limit, and redirects *not*
followed; :mod:`http.client` gives all of that directly. Every failure becomes an outcome name
(``timeout``, ``dns_error``, ``tls_error``, ``connection_error``, ``bad_response``, ...), never an
exception, so one bad host cannot stop a crawl.

Politeness (:class:`HostGate`): at most one connection per host at a time and at least
``delay`` seconds from the end of one request to the start of the next on that host; a
``Retry-After`` pushes the host's next slot further. Robots (:class:`RobotsCache`): robots.txt
fetched once per host per run and parsed with protego; a 4xx robots.txt allows everything, a
5xx or an unreachable one disallows everything (RFC 9309 §2.3.1), each with its own log row.
Connections (:class:`ConnectionPool`): a crawl keeps a connection alive between the requests
of a host, so a page costs one request, not a TCP (and TLS) set-up.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import heapq
import http.client
import ipaddress
import itertools
import select
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from protego import Protego

from citeaudit.archive.capture.scope import Refused, Scope, strip_credentials
from citeaudit.archive.capture.warc_writer import HttpExchange, Written

CHUNK = 64 * 1024


@dataclass
class Attempt:
    """The result of one GET: an exchange to archive, or the outcome that left none."""

    url: str
    outcome: str
    started_at: dt.datetime
    elapsed_ms: int
    exchange: HttpExchange | None = None
    status: int | None = None
    detail: str | None = None
    retry_after: float | None = None
    location: str | None = None
    written: Written | None = None  # where the crawl archived the response (set by the crawl)


@dataclass(frozen=True)
class Target:
    """Where a URL's request goes: scheme, host and port to connect to, Host header, path."""

    scheme: str
    connect_host: str
    connect_port: int
    host_header: str
    path: str
    host: str


def host_matches(host: str, patterns: tuple[str, ...]) -> bool:
    """True when ``host`` is one of ``patterns`` or a subdomain of one."""
    return any(host == p or host.endswith("." + p) for p in patterns)


def resolve_target(url: str, via: str | None) -> Target | str:
    """The :class:`Target` of an http(s) URL, or an outcome name (``unsupported_url``)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "unsupported_url"
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in ("http", "https") or not host:
        return "unsupported_url"
    default = 443 if scheme == "https" else 80
    host_header = host if port in (None, default) else f"{host}:{port}"
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    if via:
        v = urlsplit(via)
        vport = v.port or (443 if v.scheme == "https" else 80)
        return Target(v.scheme, v.hostname or "127.0.0.1", vport, host_header, path, host)
    return Target(scheme, host, port or default, host_header, path, host)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date), or None."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class _Watchdog:
    """One thread for every fetch deadline of the process: a heap of (when, deadline).

    A :class:`threading.Timer` per request would start a thread per page (about as costly as
    the rest of a loopback fetch); here a deadline is a heap entry, and cancelled ones are
    dropped as they reach the top (so the heap holds at most the requests started within
    one total timeout)."""

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._heap: list[tuple[float, int, _Deadline]] = []
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None
        self._until = 0.0  # when the thread wakes next (inf: only when notified)

    def add(self, when: float, deadline: _Deadline) -> None:
        with self._cv:
            while self._heap and self._heap[0][2].cancelled:
                heapq.heappop(self._heap)
            heapq.heappush(self._heap, (when, next(self._seq), deadline))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="fetch-deadlines",
                                                daemon=True)
                self._thread.start()
            elif when < self._until:
                # wake the thread only when it sleeps past this deadline (waking it for every
                # request would cost a thread switch per page)
                self._cv.notify()

    def _run(self) -> None:
        while True:
            with self._cv:
                while True:
                    if not self._heap:
                        self._until = float("inf")
                        self._cv.wait()
                        continue
                    when, _, d = self._heap[0]
                    if d.cancelled:
                        heapq.heappop(self._heap)
                        continue
                    wait = when - time.monotonic()
                    if wait > 0:
                        self._until = when
                        self._cv.wait(wait)
                        continue
                    heapq.heappop(self._heap)
                    break
            d.fire()


_WATCHDOG = _Watchdog()


class _Deadline:
    """Shuts the socket down when the total time is up, so a server trickling its status line
    or headers one byte at a time cannot hold a fetch past ``total_timeout`` (the socket's
    read timeout only bounds the gap between two bytes). Once :meth:`cancel` has returned
    the deadline can no longer fire (a kept-alive socket is never shut down after its
    exchange ended)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.fired = False
        self.cancelled = False
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._armed = False

    def arm(self, sock: socket.socket) -> None:
        """Watch ``sock`` (again: a request sent anew on a new connection keeps the first
        arming's end time)."""
        with self._lock:
            self._sock = sock
            if self._armed:
                return
            self._armed = True
        _WATCHDOG.add(time.monotonic() + self.seconds, self)

    def fire(self) -> None:
        with self._lock:
            if self.cancelled:
                return
            self.fired = True
            if self._sock is not None:
                with suppress(OSError):
                    self._sock.shutdown(socket.SHUT_RDWR)

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True


_TLS: ssl.SSLContext | None = None


def _tls_context() -> ssl.SSLContext:
    """The default client TLS context, built once (loading the CA store costs milliseconds)."""
    global _TLS
    if _TLS is None:
        _TLS = ssl.create_default_context()
    return _TLS


class ConnectionPool:
    """Kept-alive connections between the requests of one crawl, keyed by where they go.

    A connection is given back only after an exchange read to its end (no size cut, no
    timeout, no error, the server not closing it) and is taken again only for the same
    scheme, address name and port; its peer address was checked by the scope when it was
    opened. Politeness is unchanged: the crawl's :class:`HostGate` still orders the requests
    of a host, a kept connection only saves the TCP (and TLS) set-up. A connection idle for
    more than ``idle_seconds``, or found readable while idle (the server closed it), is
    closed instead of reused; at most ``max_idle`` wait at once (the oldest closed first).
    """

    def __init__(self, idle_seconds: float = 4.0, max_idle: int = 32) -> None:
        self.idle_seconds = idle_seconds
        self.max_idle = max_idle
        self._idle: dict[tuple, list[tuple[float, http.client.HTTPConnection, str | None]]] = {}
        self._count = 0
        self._lock = threading.Lock()
        self.reused = 0

    def take(self, key: tuple) -> tuple[http.client.HTTPConnection, str | None] | None:
        """An idle live connection to ``key`` and its peer address, or None."""
        now = time.monotonic()
        while True:
            with self._lock:
                stack = self._idle.get(key)
                if not stack:
                    return None
                since, conn, ip = stack.pop()
                self._count -= 1
            if now - since <= self.idle_seconds and _idle_alive(conn):
                with self._lock:
                    self.reused += 1
                return conn, ip
            conn.close()

    def give(self, key: tuple, conn: http.client.HTTPConnection, ip: str | None) -> None:
        """Keep ``conn`` (its last exchange read to the end) for the next request to ``key``."""
        drop = None
        with self._lock:
            self._idle.setdefault(key, []).append((time.monotonic(), conn, ip))
            self._count += 1
            if self._count > self.max_idle:
                oldest = min((v[0][0], k) for k, v in self._idle.items() if v)[1]
                drop = self._idle[oldest].pop(0)[1]
                self._count -= 1
        if drop is not None:
            drop.close()

    def close(self) -> None:
        """Close every idle connection."""
        with self._lock:
            conns = [c for v in self._idle.values() for _, c, _ in v]
            self._idle.clear()
            self._count = 0
        for c in conns:
            c.close()


def _idle_alive(conn: http.client.HTTPConnection) -> bool:
    """True when an idle connection's socket is open and has nothing to read (a readable idle
    socket is a server's close or stray bytes: either way not reusable)."""
    sock = conn.sock
    if sock is None:
        return False
    try:
        if isinstance(sock, ssl.SSLSocket) and sock.pending():
            return False
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return False
    return not readable


class DecodedSize:
    """Counts the decoded size of a body as it arrives (``Content-Encoding`` gzip, deflate, br,
    in any stack), inflating at most ``limit + 1`` bytes: a compression bomb stops at the cap
    of what it *decodes* to, not of what it weighs on the wire. An unknown coding or a broken
    stream stops counting (the page-text step reports the broken body)."""

    def __init__(self, content_encoding: str | None, limit: int) -> None:
        codings = [c.strip().lower() for c in (content_encoding or "").split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        self.limit = limit
        self.decoded = 0
        self.active = bool(codings) and all(c in ("gzip", "x-gzip", "deflate", "br")
                                            for c in codings)
        # decoders in decoding order: the last coding applied is undone first
        self._layers = [self._decoder(c) for c in reversed(codings)] if self.active else []

    @staticmethod
    def _decoder(coding: str):
        if coding == "br":
            import brotli

            return ("br", brotli.Decompressor())
        wbits = 16 + zlib.MAX_WBITS if coding in ("gzip", "x-gzip") else zlib.MAX_WBITS
        return ("z", zlib.decompressobj(wbits))

    def _through(self, i: int, data: bytes) -> None:
        if i == len(self._layers):
            self.decoded += len(data)
            return
        kind, dec = self._layers[i]
        budget = self.limit + 1
        if kind == "z":
            out = dec.decompress(data, budget)
            self._through(i + 1, out)
            while dec.unconsumed_tail and not self.over:
                out = dec.decompress(dec.unconsumed_tail, budget)
                self._through(i + 1, out)
        else:
            out = dec.process(data, output_buffer_limit=budget)
            self._through(i + 1, out)
            while not self.over and not dec.can_accept_more_data():
                out = dec.process(b"", output_buffer_limit=budget)
                if not out:
                    break
                self._through(i + 1, out)

    @property
    def over(self) -> bool:
        return self.decoded > self.limit

    def feed(self, chunk: bytes) -> bool:
        """Count ``chunk``; True once the decoded body is larger than the limit."""
        if not self.active or self.over:
            return self.over
        try:
            self._through(0, chunk)
        except Exception:  # zlib.error, brotli.error: a broken stream is not ours to judge
            self.active = False
        return self.over


def _connect(host: str, port: int, addrs: list, timeout: float) -> socket.socket:
    """A TCP connection to the first reachable of the checked ``addrs`` (no new lookup)."""
    last: OSError | None = None
    for a in addrs:
        try:
            return socket.create_connection((str(a), port), timeout=timeout)
        except TimeoutError:
            raise
        except OSError as exc:
            last = exc
    raise last or OSError(f"no address for {host}")


def http_get(url: str, *, via: str | None, user_agent: str, connect_timeout: float,
             read_timeout: float, total_timeout: float, max_body: int,
             scope: Scope | None = None, trusted: bool = False,
             extra_headers: tuple[tuple[str, str], ...] = (),
             pool: ConnectionPool | None = None) -> Attempt:
    """One GET of ``url`` (no redirect followed), never raising; see the module docstring.

    ``scope`` (default: the safe defaults of :class:`Scope`) decides which URLs and addresses
    may be reached; ``trusted`` marks the operator's own configured origin (an archive's URL)
    and ``via`` sends the request to the operator's chosen origin: neither origin is checked
    (the operator chose it), the cited URL behind ``via`` still is, by name. Credentials in
    the URL are dropped before anything is sent, logged or archived. ``total_timeout`` bounds
    the whole exchange, headers included; ``max_body`` bounds the body on the wire and, for a
    compressed body, once decoded. ``extra_headers`` are sent after the fixed ones (a Memento
    TimeGate's ``Accept-Datetime``). With a ``pool`` the connection is kept alive for the
    next request to the same place (:class:`ConnectionPool`), else it is closed
    (``Connection: close``)."""
    url = strip_credentials(url)
    scope = scope or Scope()
    started = _utcnow()
    t0 = time.monotonic()

    def done(outcome: str, **kw) -> Attempt:
        return Attempt(url, outcome, started, int((time.monotonic() - t0) * 1000), **kw)

    target = resolve_target(url, via)
    if isinstance(target, str):
        return done(target, detail="only absolute http(s) URLs are fetched")
    addrs: list = []
    try:
        if not trusted:
            _, _, literal = scope.check_url(url, resolves=not via)
            if literal is not None and not via:
                addrs = [literal]
        if target.host.endswith(".invalid"):
            # RFC 6761: names under .invalid never resolve; do not ask a resolver
            return done("dns_error", detail=f"{target.host}: reserved .invalid name")
        if not addrs and (via or trusted):
            # the operator's own origin (--via, a configured archive): not checked
            addrs = [ipaddress.ip_address(i[4][0].split("%", 1)[0]) for i in socket.getaddrinfo(
                target.connect_host, target.connect_port, type=socket.SOCK_STREAM)]
        elif not addrs:
            addrs = scope.resolve(target.connect_host, target.connect_port)
    except Refused as exc:
        return done(exc.outcome, detail=exc.detail)
    except (socket.gaierror, UnicodeError) as exc:
        return done("dns_error", detail=str(exc))
    except OSError as exc:
        return done("dns_error", detail=str(exc))
    headers = [("Host", target.host_header), ("User-Agent", user_agent),
               ("Accept", "*/*"), ("Accept-Encoding", "identity"),
               *(() if pool is not None else (("Connection", "close"),)),
               *extra_headers]
    # through --via the request goes to a proxy-like origin: absolute-form (RFC 9112 §3.2.2),
    # so the origin knows the scheme as well as the host; the WARC records it as sent
    request_target = (f"{urlsplit(url).scheme.lower()}://{target.host_header}{target.path}"
                      if via else target.path)
    request_line = f"GET {request_target} HTTP/1.1"
    key = (target.scheme, target.connect_host, target.connect_port, bool(via or trusted))
    deadline = _Deadline(max(0.0, total_timeout - (time.monotonic() - t0)))
    conn: http.client.HTTPConnection | None = None
    keep = False

    def timed_out(detail: str, **kw) -> Attempt:
        return done("timeout", detail=f"{detail} (total time over {total_timeout:g} s)"
                    if deadline.fired else detail, **kw)

    def open_new() -> tuple[http.client.HTTPConnection, str | None] | Attempt:
        """A new connection to the target, its peer checked; or the outcome that stopped it."""
        new: http.client.HTTPConnection
        if target.scheme == "https":
            new = http.client.HTTPSConnection(target.connect_host, target.connect_port,
                                              timeout=connect_timeout, context=_tls_context())
        else:
            new = http.client.HTTPConnection(target.connect_host, target.connect_port,
                                             timeout=connect_timeout)
        try:
            sock = _connect(target.connect_host, target.connect_port, addrs, connect_timeout)
            if target.scheme == "https":
                sock = _tls_context().wrap_socket(sock, server_hostname=target.connect_host)
            new.sock = sock
        except TimeoutError:
            return done("timeout", detail="connect timeout")
        except ssl.SSLError as exc:
            return done("tls_error", detail=str(exc))
        except OSError as exc:
            return done("connection_error", detail=f"connect: {exc}")
        try:
            peer = sock.getpeername()[0]
        except OSError:
            peer = None
        if not (via or trusted):
            try:
                if peer is None:
                    raise Refused("private_address", "peer address unknown after connect")
                scope.check_peer(target.connect_host, peer)
            except Refused as exc:
                new.close()
                return done(exc.outcome, detail=f"connected address: {exc.detail}")
        return new, peer

    try:
        reused = pool.take(key) if pool is not None else None
        while True:
            if reused is not None:
                conn, ip = reused
            else:
                opened = open_new()
                if isinstance(opened, Attempt):
                    return opened
                conn, ip = opened
            sock = conn.sock
            assert sock is not None
            sock.settimeout(read_timeout)
            deadline.arm(sock)
            try:
                conn.putrequest("GET", request_target, skip_host=True,
                                skip_accept_encoding=True)
                for name, value in headers:
                    conn.putheader(name, value)
                conn.endheaders()
                resp = conn.getresponse()
            except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected,
                    http.client.BadStatusLine) as exc:
                if reused is not None and not deadline.fired:
                    # a kept-alive connection the server closed while it was idle: nothing
                    # of this request was answered, so it is sent again on a new connection
                    conn.close()
                    reused = None
                    continue
                if deadline.fired:
                    return timed_out("response head not finished")
                if isinstance(exc, ConnectionResetError):
                    return done("connection_reset", detail=str(exc))
                if isinstance(exc, http.client.HTTPException):
                    return done("bad_response", detail=f"{type(exc).__name__}: {exc}"[:300])
                return done("connection_error", detail=str(exc))
            except TimeoutError:
                return done("timeout", detail="no response head before the read timeout")
            except ssl.SSLError as exc:
                return done("tls_error", detail=str(exc))
            except http.client.HTTPException as exc:
                if deadline.fired:
                    return timed_out("response head not finished")
                return done("bad_response", detail=f"{type(exc).__name__}: {exc}"[:300])
            except OSError as exc:
                if deadline.fired:
                    return timed_out("response head not finished")
                return done("connection_error", detail=str(exc))
            break
        if deadline.fired:  # the shut-down socket ended the head early: not a response
            return timed_out("response head not finished")
        status = resp.status
        body = bytearray()
        truncated = None
        decoded = DecodedSize(resp.getheader("Content-Encoding"), max_body)
        try:
            while True:
                if deadline.fired or time.monotonic() - t0 > total_timeout:
                    return done("timeout", status=status,
                                detail=f"body not finished after {total_timeout:g} s")
                chunk = resp.read1(CHUNK) if hasattr(resp, "read1") else resp.read(CHUNK)
                if not chunk:
                    if deadline.fired:
                        return done("timeout", status=status,
                                    detail=f"body not finished after {total_timeout:g} s")
                    break
                body += chunk
                if len(body) > max_body:
                    del body[max_body:]
                    truncated = "length"
                    break
                if decoded.feed(chunk):
                    # keep the wire bytes before this chunk: they decode to at most the cap
                    del body[len(body) - len(chunk):]
                    truncated = "length"
                    break
        except TimeoutError:
            return done("timeout", status=status, detail="body read timeout")
        except http.client.IncompleteRead as exc:
            if deadline.fired:
                return timed_out("body not finished", status=status)
            return done("connection_error", status=status,
                        detail=f"incomplete body: {len(exc.partial)} bytes, more expected")
        except ConnectionResetError as exc:
            if deadline.fired:  # our own shut-down socket (the total timeout), not the server
                return timed_out("body not finished", status=status)
            return done("connection_reset", status=status, detail=str(exc))
        except (http.client.HTTPException, OSError, ValueError) as exc:
            if deadline.fired:
                return timed_out("body not finished", status=status)
            return done("bad_response", status=status, detail=f"{type(exc).__name__}: {exc}")
        remaining = getattr(resp, "length", None)
        if truncated is None and remaining:
            return done("connection_error", status=status,
                        detail=f"incomplete body: {len(body)} bytes, {remaining} more declared")
        resp_headers = []
        for name, value in resp.msg.items():
            if name.lower() == "transfer-encoding":
                # the body is stored de-chunked, so the framing header is kept under a new name
                name = "X-Archive-Orig-Transfer-Encoding"
            resp_headers.append((name, value))
        protocol = "HTTP/1.1" if resp.version == 11 else "HTTP/1.0"
        exchange = HttpExchange(
            url=url, request_line=request_line, request_headers=headers,
            status_line=f"{status} {resp.reason}".strip(), response_headers=resp_headers,
            protocol=protocol, body=bytes(body), ip_address=ip, fetched_at=started,
            truncated=truncated)
        outcome = "too_large" if truncated else "fetched"
        coding = resp.getheader("Content-Encoding")
        detail = (f"decoded body larger than {max_body} bytes ({coding})"
                  if decoded.over else None)
        # reusable only when this exchange was read to its end and the server keeps it open
        # (read1 leaves a Content-Length body's response open at length 0: closed here, the
        # socket stays with the connection)
        keep = (pool is not None and truncated is None and not resp.will_close
                and (resp.isclosed() or resp.length == 0))
        if keep:
            resp.close()
        return done(outcome, exchange=exchange, status=status, detail=detail,
                    retry_after=parse_retry_after(resp.getheader("Retry-After")),
                    location=resp.getheader("Location"))
    finally:
        deadline.cancel()
        if conn is not None:
            if keep and not deadline.fired and pool is not None:
                pool.give(key, conn, ip)
            else:
                conn.close()


@dataclass
class _HostState:
    lock: threading.Lock = field(default_factory=threading.Lock)
    next_at: float = 0.0


class HostGate:
    """One connection per host at a time, ``delay`` seconds between requests to a host."""

    def __init__(self, delay: float, sleep: Callable[[float], None] = time.sleep) -> None:
        self.delay = delay
        self._sleep = sleep
        self._hosts: dict[str, _HostState] = {}
        self._guard = threading.Lock()

    def _state(self, host: str) -> _HostState:
        with self._guard:
            return self._hosts.setdefault(host, _HostState())

    @contextmanager
    def slot(self, host: str):
        """Hold ``host``'s only slot; yields a function to push its next slot back (seconds)."""
        state = self._state(host)
        with state.lock:
            wait = state.next_at - time.monotonic()
            if wait > 0:
                self._sleep(wait)
            extra = [0.0]

            def defer(seconds: float) -> None:
                extra[0] = max(extra[0], seconds)

            try:
                yield defer
            finally:
                state.next_at = time.monotonic() + max(self.delay, extra[0])


class RobotsCache:
    """robots.txt per host (scheme + host + port) for one run, fetched through ``fetch``.

    ``fetch(url)`` returns the :class:`Attempt` of the robots.txt request (the caller logs and
    archives it). The verdict is a parsed :class:`Protego`, ``True`` (allow all) or ``False``
    (disallow all: 5xx, unreachable).
    """

    def __init__(self, fetch: Callable[[str], Attempt], user_agent_token: str = "citeaudit"
                 ) -> None:
        self._fetch = fetch
        self.token = user_agent_token
        self._rules: dict[str, Protego | bool] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    @staticmethod
    def robots_url(url: str) -> str:
        """The robots.txt URL of ``url``'s origin, spelled one way whatever the URL's spelling
        (host case, a trailing dot, the default port written out, credentials): one robots.txt
        fetch and one verdict per origin, as RFC 9309 scopes it."""
        p = urlsplit(url)
        scheme = p.scheme.lower()
        host = (p.hostname or "").lower().rstrip(".")
        if ":" in host:
            host = f"[{host}]"
        try:
            port = p.port
        except ValueError:
            port = None
        if port is not None and port != (443 if scheme == "https" else 80):
            host += f":{port}"
        return f"{scheme}://{host}/robots.txt"

    def allowed(self, url: str) -> tuple[bool, str | None, str | None]:
        """(allowed, outcome, why not) for ``url``; fetches the host's robots.txt on first use.

        A robots.txt that could not be fetched at all (DNS, connection, timeout) refuses the
        page with that network outcome; a 5xx one with ``robots_disallowed``."""
        key = self.robots_url(url)
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._rules:
                self._rules[key] = self._load(key)
        rules = self._rules[key]
        if rules is True:
            return True, None, None
        if rules is False:
            return False, "robots_disallowed", "robots.txt answered 5xx/429: disallow all"
        if isinstance(rules, str):
            return False, rules, f"robots.txt not fetched ({rules}): disallow all"
        if rules.can_fetch(url, self.token):
            return True, None, None
        return False, "robots_disallowed", "disallowed by robots.txt"

    def _load(self, robots_url: str) -> Protego | bool | str:
        seen = 0
        url = robots_url
        while True:
            att = self._fetch(url)
            if att.status is None or att.exchange is None:
                return att.outcome
            if 300 <= att.status < 400 and att.location and seen < 5:
                from urllib.parse import urljoin

                url = urljoin(url, att.location)
                seen += 1
                continue
            if 200 <= att.status < 300:
                text = att.exchange.body.decode("utf-8", errors="replace")
                return Protego.parse(text)
            return bool(400 <= att.status < 500 and att.status != 429)
