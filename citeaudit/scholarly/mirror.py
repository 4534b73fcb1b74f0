"""A loopback registry: Crossref and OpenAlex work records served from folders over HTTP.

Used by the tests (recorded real bodies) and by the offline demo (``<raw>/registry/``, written by
the demo corpus generator). It answers the requests crossrefapi and pyalex make, in the
registries' shapes:

- ``/crossref/works/{doi}`` → the stored body, or 404 ``Resource not found.`` (text/plain, as
  api.crossref.org answers);
- ``/crossref/works?query.bibliographic=...&select=...&rows=N`` → a ``work-list`` message;
- ``/crossref/works?filter=doi:a,doi:b,...&rows=N`` → a ``work-list`` of the stored records of
  those DOIs (a DOI the registry does not hold is simply absent, as on api.crossref.org);
- ``/openalex/works/doi:{doi}`` (or ``/works/https://doi.org/{doi}``) → the stored work, or 404;
- ``/openalex/works?filter=title.search:...&per-page=N`` → ``{"meta": ..., "results": [...]}``;
- ``/openalex/works?filter=doi:a|b|...&per-page=N`` → the same list shape, of those DOIs' works.

List answers hold at most ``rows``/``per-page`` records, in the mirror's own order (by DOI,
not the request's), so a client must match records to DOIs by the DOI inside each record.

Records are indexed by the DOI *inside* each body (file names are only labels). Searches rank
records by shared title words, a stand-in for the registries' relevance ranking: like the real
services it returns weak candidates too, and the checker must reject them.

``faults`` makes a registry misbehave, for the outage tests: ``"429"``, ``"500"``,
``"timeout"`` (answers after ``slow_seconds``), ``"invalid_json"``. ``batch_omits`` names DOIs
a list answer leaves out although ``/works/{doi}`` has them (a lagging filter index);
``batch_faults`` applies a fault to the DOI-list requests only. ``log`` holds the arrival time
(``time.monotonic()``) and path of every request, so a benchmark can draw the timeline.
"""

from __future__ import annotations

import json
import re
import threading
import time
import unicodedata
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from citeaudit import storage
from citeaudit.scholarly.doi import normalize

NOT_FOUND_CROSSREF = b"Resource not found."


def _words(text: str) -> set[str]:
    plain = unicodedata.normalize("NFKD", text or "")
    plain = "".join(c for c in plain if not unicodedata.combining(c)).lower()
    return {w for w in re.split(r"[^\w]+", plain) if len(w) > 2}


def load_bodies(folders: Iterable[Path], registry: str) -> dict[str, bytes]:
    """DOI → body bytes for every ``*.json`` under the folders (the DOI read from the body)."""
    out: dict[str, bytes] = {}
    for folder in folders:
        for path in sorted(storage.path(folder).glob("*.json")):
            raw = path.read_bytes()
            doc = json.loads(raw)
            doi = (doc.get("message") or {}).get("DOI") if registry == "crossref" \
                else doc.get("doi")
            key = normalize(doi)
            if key:
                out[key] = raw
    return out


class RegistryMirror:
    """The server; use as a context manager. ``crossref_url``/``openalex_url`` are base URLs."""

    def __init__(self, crossref_dirs: Iterable[Path] = (), openalex_dirs: Iterable[Path] = (),
                 *, slow_seconds: float = 3.0) -> None:
        self.bodies = {"crossref": load_bodies(crossref_dirs, "crossref"),
                       "openalex": load_bodies(openalex_dirs, "openalex")}
        self.docs = {reg: {k: json.loads(v) for k, v in bodies.items()}
                     for reg, bodies in self.bodies.items()}
        self.faults: dict[str, str] = {}
        self.batch_faults: dict[str, str] = {}
        self.batch_omits: set[str] = set()
        # registry -> (X-Rate-Limit-Limit, X-Rate-Limit-Interval) sent with its answers, as
        # Crossref announces its limits (none by default)
        self.announce: dict[str, tuple[str, str]] = {}
        self.in_flight: dict[str, int] = {"crossref": 0, "openalex": 0}
        self.max_in_flight: dict[str, int] = {"crossref": 0, "openalex": 0}
        self.slow_seconds = slow_seconds
        self.hits: dict[str, int] = {"crossref": 0, "openalex": 0}
        self.paths: list[str] = []
        # (time.monotonic() on arrival, path) of every request, for timelines in benchmarks
        self.log: list[tuple[float, str]] = []
        self._lock = threading.Lock()
        self._word_index: dict[tuple[str, str], list[tuple[str, set[str], dict]]] = {}
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @classmethod
    def from_raw(cls, registry_dir: Path) -> RegistryMirror:
        """The demo layout: ``<registry_dir>/{crossref,openalex}/works/*.json``."""
        return cls([registry_dir / "crossref" / "works"], [registry_dir / "openalex" / "works"])

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> RegistryMirror:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        mirror = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # headers and body go out in separate writes on a kept-alive connection: without
            # TCP_NODELAY each answer waited ~40 ms for the client's delayed ACK (Nagle)
            disable_nagle_algorithm = True

            def do_GET(self) -> None:  # noqa: N802
                mirror._handle(self)

            def do_HEAD(self) -> None:  # noqa: N802
                mirror._handle(self, head=True)

            def log_message(self, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # stop() waits for the serve loop's next poll: Python's default 0.5 s, paid by every
        # metadata step that starts this mirror
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def url(self) -> str:
        assert self._server is not None, "mirror not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def crossref_url(self) -> str:
        return self.url + "/crossref"

    @property
    def openalex_url(self) -> str:
        return self.url + "/openalex"

    # ------------------------------------------------------------------ answers
    def _handle(self, req: BaseHTTPRequestHandler, head: bool = False) -> None:
        registry = (urlsplit(req.path).path.split("/", 2) + ["", ""])[1]
        arrived = time.monotonic()
        with self._lock:
            self.paths.append(req.path)
            self.log.append((arrived, req.path))
            if registry in self.hits:
                self.hits[registry] += 1
                self.in_flight[registry] += 1
                self.max_in_flight[registry] = max(self.max_in_flight[registry],
                                                   self.in_flight[registry])
        try:
            self._answer(req, registry, head)
        finally:
            with self._lock:
                if registry in self.in_flight:
                    self.in_flight[registry] -= 1

    def _answer(self, req: BaseHTTPRequestHandler, registry: str, head: bool) -> None:
        parts = urlsplit(req.path)
        segments = parts.path.split("/", 2)
        rest = "/" + (segments[2] if len(segments) > 2 else "")
        req.registry = registry  # type: ignore[attr-defined]
        query = parse_qs(parts.query)
        fault = self.faults.get(registry, "")
        if self._doi_filter(registry, query) is not None:
            fault = fault or self.batch_faults.get(registry, "")
        if fault in ("429", "500"):
            body = (b'{"status":"failed","message":"rate limited"}' if fault == "429"
                    else b"<html><body>Internal Server Error</body></html>")
            return self._send(req, int(fault), body, "text/html", head,
                              {"Retry-After": "0"} if fault == "429" else None)
        if fault == "timeout":
            time.sleep(self.slow_seconds)
        if registry == "crossref" and rest.startswith("/works/"):
            return self._crossref_work(req, unquote(rest[len("/works/"):]), head, fault)
        if registry == "crossref" and rest.rstrip("/") == "/works":
            return self._crossref_search(req, query, head, fault)
        if registry == "openalex" and rest.startswith("/works/"):
            return self._openalex_work(req, unquote(rest[len("/works/"):]), head, fault)
        if registry == "openalex" and rest.rstrip("/") == "/works":
            return self._openalex_search(req, query, head, fault)
        return self._send(req, 404, NOT_FOUND_CROSSREF, "text/plain", head)

    def _send(self, req: BaseHTTPRequestHandler, status: int, body: bytes, ctype: str,
              head: bool, headers: dict[str, str] | None = None, fault: str = "") -> None:
        if fault == "invalid_json" and status == 200:
            body = body[: max(1, len(body) // 2)]  # a body cut in the middle: not JSON
        try:
            req.send_response(status)
            req.send_header("Content-Type", ctype)
            req.send_header("Content-Length", str(len(body)))
            announced = self.announce.get(getattr(req, "registry", ""))
            if announced:
                req.send_header("X-Rate-Limit-Limit", announced[0])
                req.send_header("X-Rate-Limit-Interval", announced[1])
            for k, v in (headers or {}).items():
                req.send_header(k, v)
            req.end_headers()
            if not head:
                req.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test)

    def _crossref_work(self, req, doi_text: str, head: bool, fault: str) -> None:
        body = self.bodies["crossref"].get(normalize(doi_text) or "")
        if body is None:
            return self._send(req, 404, NOT_FOUND_CROSSREF, "text/plain", head)
        return self._send(req, 200, body, "application/json", head, fault=fault)

    def _openalex_work(self, req, ident: str, head: bool, fault: str) -> None:
        doi = normalize(ident[4:] if ident.lower().startswith("doi:") else ident)
        body = self.bodies["openalex"].get(doi or "")
        if body is None:
            msg = {"error": "404 Not Found", "message": f"No work found for {ident}"}
            return self._send(req, 404, json.dumps(msg).encode(), "application/json", head)
        return self._send(req, 200, body, "application/json", head, fault=fault)

    def _rank(self, registry: str, text: str, fields: str) -> list[dict]:
        want = _words(text)
        scored = []
        for doi, words, doc in self._searchable(registry, fields):
            shared = len(want & words)
            if shared:
                scored.append((-shared, doi, doc))
        return [doc for _, _, doc in sorted(scored, key=lambda t: (t[0], t[1]))]

    def _searchable(self, registry: str, fields: str) -> list[tuple[str, set[str], dict]]:
        """(DOI, words a search matches, record) of every record, computed once per registry
        and field set (a search then costs one pass of set intersections, not one of text
        normalization: a run of a thousand searches over the recorded corpus took seconds)."""
        key = (registry, fields)
        with self._lock:
            cached = self._word_index.get(key)
        if cached is not None:
            return cached
        rows = []
        for doi, doc in self.docs[registry].items():
            if registry == "crossref":
                msg = doc.get("message") or {}
                words = _words(" ".join(msg.get("title") or []))
                if fields == "bibliographic":
                    for a in msg.get("author") or []:
                        words |= _words(str(a.get("family", "")))
            else:
                words = _words(str(doc.get("title") or doc.get("display_name") or ""))
            rows.append((doi, words, doc))
        with self._lock:
            return self._word_index.setdefault(key, rows)

    @staticmethod
    def _doi_filter(registry: str, query: dict) -> list[str] | None:
        """The DOIs of a ``filter=doi:...`` list request, or None for any other request."""
        flt = (query.get("filter") or [""])[0]
        if registry == "crossref":
            parts = re.split(r",(?=[a-z-]+:)", flt) if flt else []
            if not parts or not all(p.startswith("doi:") for p in parts):
                return None
            return [p[4:] for p in parts]
        if registry == "openalex" and flt.startswith("doi:") and \
                not re.search(r",[a-z_.]+:", flt):
            return flt[4:].split("|")
        return None

    def _listed(self, registry: str, dois: list[str]) -> list[dict]:
        """The stored records of those DOIs (omitting ``batch_omits``), in DOI order."""
        keys = {normalize(d) for d in dois} - {None} - self.batch_omits
        return [self.docs[registry][k] for k in sorted(keys) if k in self.docs[registry]]

    def _crossref_search(self, req, query: dict, head: bool, fault: str) -> None:
        dois = self._doi_filter("crossref", query)
        if dois is not None:
            rows = int((query.get("rows") or ["20"])[0])
            listed = [doc.get("message") or {} for doc in self._listed("crossref", dois)]
            body = {"status": "ok", "message-type": "work-list", "message-version": "1.0.0",
                    "message": {"facets": {}, "total-results": len(listed),
                                "items": listed[:rows], "items-per-page": rows,
                                "query": {"start-index": 0, "search-terms": None}}}
            return self._send(req, 200, json.dumps(body).encode(), "application/json", head,
                              fault=fault)
        text = (query.get("query.bibliographic") or query.get("query") or [""])[0]
        rows = int((query.get("rows") or ["20"])[0])
        select = [s for s in (query.get("select") or [""])[0].split(",") if s]
        offset = int((query.get("offset") or ["0"])[0])
        ranked = self._rank("crossref", text, "bibliographic")
        items = []
        for doc in ranked[offset: offset + rows]:
            msg = dict(doc.get("message") or {})
            items.append({k: v for k, v in msg.items() if not select or k in select})
        body = {"status": "ok", "message-type": "work-list", "message-version": "1.0.0",
                "message": {"facets": {}, "total-results": len(ranked), "items": items,
                            "items-per-page": rows,
                            "query": {"start-index": offset, "search-terms": None}}}
        return self._send(req, 200, json.dumps(body).encode(), "application/json", head,
                          fault=fault)

    def _openalex_search(self, req, query: dict, head: bool, fault: str) -> None:
        per_page = int((query.get("per-page") or query.get("per_page") or ["25"])[0])
        dois = self._doi_filter("openalex", query)
        if dois is not None:
            listed = self._listed("openalex", dois)
            body = {"meta": {"count": len(listed), "db_response_time_ms": 1, "page": 1,
                             "per_page": per_page, "groups_count": None},
                    "results": listed[:per_page], "group_by": []}
            return self._send(req, 200, json.dumps(body).encode(), "application/json", head,
                              fault=fault)
        text = ""
        # filters are comma-separated, but a title may hold commas: split only before a key
        for flt in re.split(r",(?=[a-z_.]+:)", (query.get("filter") or [""])[0]):
            if flt.startswith(("title.search:", "display_name.search:")):
                text = flt.split(":", 1)[1]
        text = text or (query.get("search") or [""])[0]
        ranked = self._rank("openalex", text, "title")
        body = {"meta": {"count": len(ranked), "db_response_time_ms": 1, "page": 1,
                         "per_page": per_page, "groups_count": None},
                "results": ranked[:per_page], "group_by": []}
        return self._send(req, 200, json.dumps(body).encode(), "application/json", head,
                          fault=fault)
