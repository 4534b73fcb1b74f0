"""Crossref (crossrefapi) and OpenAlex (pyalex) clients on a :class:`RegistrySession`.

The libraries build the requests (paths, query parameters, headers) exactly as they do against
the real services; the session decides where they go and how politely. Each call returns a
:class:`Fetch`: what the registry answered (HTTP status, raw body) and what that means
('found', 'not_found', 'error', 'invalid'). A 404 is the only answer read as "does not exist";
a 429/5xx after the bounded retries, a timeout, a refused connection or a body that is not the
JSON the registry documents is an ``error``/``invalid``: the registry could not answer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import quote

import pyalex
import requests
from crossref import restful

from citeaudit.scholarly import records
from citeaudit.scholarly.doi import normalize
from citeaudit.scholarly.transport import RegistrySession

CROSSREF_ORIGIN = "https://" + restful.API
OPENALEX_ORIGIN = "https://api.openalex.org"
SEARCH_ROWS = 5
SEARCH_FIELDS = ("DOI", "title", "subtitle", "author", "issued", "published-print",
                 "published-online", "published", "container-title", "short-container-title",
                 "updated-by", "update-to", "type")


@dataclass(frozen=True)
class Fetch:
    """One registry request's result, as stored in the cache (``scholarly_records``)."""

    registry: str
    kind: str  # 'work' (DOI lookup) or 'search'
    key: str  # the DOI, or the search text
    http_status: int | None
    outcome: str  # 'found', 'not_found', 'error', 'invalid'
    raw_json: str | None
    detail: str = ""


@dataclass(frozen=True)
class Batch:
    """What one multi-DOI request settled.

    ``fetches`` holds a Fetch per DOI the request answered: 'found' for every record the list
    held (stored as the single-work body the registry's ``/works/{doi}`` would give), or the
    request's own failure for every DOI when the registry could not answer (429/5xx after the
    retries, timeout, refused connection). ``unanswered`` lists the DOIs the answer did not
    settle (absent from the list, or a list the endpoint would not give): each needs its own
    ``/works/{doi}`` request, which alone can say "not found".
    """

    fetches: dict[str, Fetch] = field(default_factory=dict)
    unanswered: tuple[str, ...] = ()


# a batch answer a per-DOI lookup should retry: the endpoint does not take the list (an old
# mirror), not an outage of the registry
_BATCH_NOT_SUPPORTED = (400, 404, 405, 414, 501)


def _batch_failed(session: RegistrySession, registry: str, dois: Sequence[str],
                  exc: BaseException | None) -> Batch:
    """The outcome of a list request that did not give a usable list (see :class:`Batch`)."""
    last = session.last
    status = last.status if last is not None else None
    if status in _BATCH_NOT_SUPPORTED or status == 200:
        return Batch({}, tuple(dois))
    if status is None:
        err = last.error if last else (type(exc).__name__ if exc else "no_response")
        text, detail = None, f"batch:{err}"
    else:
        text, detail = _body_text(last.body), f"batch:http_{status}"
    return Batch({d: Fetch(registry, "work", d, status, "error", text, detail) for d in dois}, ())


def _batch_found(registry: str, dois: Sequence[str], items: list[dict], doi_of,
                 envelope) -> Batch:
    """Match a list's records back to the requested DOIs by the DOI inside each record."""
    wanted = set(dois)
    found: dict[str, Fetch] = {}
    for item in items:
        key = normalize(doi_of(item))
        if key in wanted and key not in found:
            body = json.dumps(envelope(item), ensure_ascii=False)
            found[key] = Fetch(registry, "work", key, 200, "found", body, "batch")
    return Batch(found, tuple(d for d in dois if d not in found))


def _body_text(body: bytes | None) -> str | None:
    if body is None:
        return None
    return body.decode("utf-8", errors="replace")


def _classify(session: RegistrySession, registry: str, kind: str, key: str,
              parse_ok: bool, exc: BaseException | None) -> Fetch:
    """Turn the session's last response (and whether the JSON parsed) into a Fetch."""
    last = session.last
    if last is None or last.status is None:
        err = last.error if last else (type(exc).__name__ if exc else "no_response")
        if exc is not None and "timed out" in str(exc).lower():
            err = "timeout"
        return Fetch(registry, kind, key, None, "error", None, err)
    status, text = last.status, _body_text(last.body)
    if status == 200 and parse_ok:
        return Fetch(registry, kind, key, 200, "found", text)
    if status == 200:
        return Fetch(registry, kind, key, 200, "invalid", text,
                     f"invalid_body:{type(exc).__name__ if exc else 'shape'}")
    if status == 404:
        return Fetch(registry, kind, key, 404, "not_found", text)
    return Fetch(registry, kind, key, status, "error", text, f"http_{status}")


# --------------------------------------------------------------------------- Crossref
class _SessionHTTPRequest(restful.HTTPRequest):
    """crossrefapi's HTTPRequest sending through our session instead of module ``requests``."""

    def __init__(self, session: RegistrySession, verify: bool = True) -> None:
        super().__init__(throttle=False, verify=verify)
        self.session = session

    def do_http_request(self, method, endpoint, data=None, files=None, timeout=100,
                        only_headers=False, custom_header=None):
        headers = custom_header or {}
        if only_headers:
            return self.session.head(endpoint, timeout=timeout, headers=headers)
        if method == "post":
            return self.session.post(endpoint, data=data, files=files, timeout=timeout,
                                     headers=headers, verify=self.verify)
        return self.session.get(endpoint, params=data, timeout=timeout, headers=headers,
                                verify=self.verify)


def _crossref_works(session: RegistrySession) -> type[restful.Works]:
    """A Works class whose instances (and those it derives, e.g. by ``.query``) use ``session``."""
    transport = _SessionHTTPRequest(session)

    def __init__(self, *args, **kwargs):
        restful.Works.__init__(self, *args, **kwargs)
        self.http_request = transport
        self.do_http_request = transport.do_http_request

    return type("Works", (restful.Works,), {"__init__": __init__})


class CrossrefClient:
    """DOI lookups and bibliographic searches against Crossref's REST API."""

    registry = "crossref"
    # Crossref takes the doi filter repeated (``filter=doi:a,doi:b``) with ``rows`` up to 1000
    # and documents no cap on the filter count; 50 keeps the URL short (≈ 2 KB)
    batch_limit = 50
    concurrency = 1  # requests in flight at once (set from the registry's settings)

    def __init__(self, session: RegistrySession, timeout: float = 10.0,
                 mailto: str | None = None) -> None:
        self.session = session
        self.timeout = timeout
        etiquette = restful.Etiquette("citeaudit", "0.1", "https://example.invalid/citeaudit",
                                      mailto or "anonymous")
        self.works = _crossref_works(session)(etiquette=etiquette, throttle=False,
                                              timeout=timeout)

    def work(self, doi: str) -> Fetch:
        """``GET /works/{doi}`` (the DOI percent-encoded where a URL needs it)."""
        exc: BaseException | None = None
        ok = False
        try:
            body = self.works.doi(quote(doi, safe="/:;()-._~"), only_message=False)
            ok = body is None or isinstance((body or {}).get("message"), dict)
        except (requests.RequestException, ValueError, KeyError, TypeError,
                AttributeError) as e:
            exc = e
        return _classify(self.session, self.registry, "work", doi, ok, exc)

    @staticmethod
    def batchable(doi: str) -> bool:
        """A DOI that can go in a filter list (a comma would split it into two filters)."""
        return "," not in doi

    def work_list(self, dois: Sequence[str]) -> Batch:
        """``GET /works?filter=doi:a,doi:b,...&rows=N``: up to :attr:`batch_limit` DOIs."""
        if not 0 < len(dois) <= self.batch_limit:
            raise ValueError(f"a Crossref batch holds 1..{self.batch_limit} DOIs, "
                             f"not {len(dois)}")
        exc: BaseException | None = None
        params = {"filter": ",".join(f"doi:{d}" for d in dois), "rows": str(len(dois))}
        try:
            self.session.get(CROSSREF_ORIGIN + "/works", params=params, timeout=self.timeout)
            last = self.session.last
            if last is not None and last.status == 200:
                items = records.crossref_items(json.loads(last.body or b""))
                return _batch_found(self.registry, dois, items, lambda i: i.get("DOI"),
                                    lambda i: {"status": "ok", "message-type": "work",
                                               "message-version": "1.0.0", "message": i})
        except (requests.RequestException, ValueError, KeyError, TypeError) as e:
            exc = e
        return _batch_failed(self.session, self.registry, dois, exc)

    def search(self, text: str) -> Fetch:
        """``GET /works?query.bibliographic=...&select=...``: one request, the first page."""
        exc: BaseException | None = None
        ok = False
        try:
            query = self.works.query(bibliographic=text).select(*SEARCH_FIELDS)
            pages = iter(query)
            next(pages, None)  # one request: the first page; the items are read from its body
            pages.close()
            last = self.session.last
            if last is not None and last.status == 200:
                records.crossref_items(json.loads(last.body or b""))
                ok = True
        except (requests.RequestException, ValueError, KeyError, TypeError,
                AttributeError, restful.CrossrefAPIError) as e:
            exc = e
        return _classify(self.session, self.registry, "search", text, ok, exc)


# --------------------------------------------------------------------------- OpenAlex
def _openalex_works(session: RegistrySession) -> type[pyalex.Works]:
    """pyalex's Works sending every request through ``session`` (pyalex names the endpoint
    after the class, so the subclass is called Works too)."""

    def _get_from_url(self, url, session_arg=None):
        return pyalex.Works._get_from_url(self, url, session)

    return type("Works", (pyalex.Works,), {"_get_from_url": _get_from_url})


class OpenAlexClient:
    """DOI lookups and title searches against the OpenAlex API."""

    registry = "openalex"
    # OpenAlex ORs up to 100 values of one filter (``filter=doi:a|b``); per-page goes to 200
    batch_limit = 100
    concurrency = 1  # requests in flight at once (set from the registry's settings)

    def __init__(self, session: RegistrySession) -> None:
        self.session = session
        self.Works = _openalex_works(session)

    def work(self, doi: str) -> Fetch:
        """``GET /works/doi:{doi}``."""
        exc: BaseException | None = None
        ok = False
        try:
            entity = self.Works()[f"doi:{doi}"]
            ok = isinstance(entity, dict) and "id" in entity
        except (requests.RequestException, ValueError, KeyError, TypeError,
                pyalex.api.QueryError) as e:
            exc = e
        return _classify(self.session, self.registry, "work", doi, ok, exc)

    @staticmethod
    def batchable(doi: str) -> bool:
        """A DOI that can be OR-ed in a filter (``|`` and ``,`` are the filter's syntax)."""
        return "|" not in doi and "," not in doi

    def work_list(self, dois: Sequence[str]) -> Batch:
        """``GET /works?filter=doi:a|b|...&per-page=N``: up to :attr:`batch_limit` DOIs."""
        if not 0 < len(dois) <= self.batch_limit:
            raise ValueError(f"an OpenAlex batch holds 1..{self.batch_limit} DOIs, "
                             f"not {len(dois)}")
        exc: BaseException | None = None
        try:
            self.Works().filter_or(doi=list(dois)).get(per_page=len(dois))
            last = self.session.last
            if last is not None and last.status == 200:
                items = records.openalex_results(json.loads(last.body or b""))
                return _batch_found(self.registry, dois, items, lambda i: i.get("doi"),
                                    lambda i: i)
        except (requests.RequestException, ValueError, KeyError, TypeError,
                pyalex.api.QueryError) as e:
            exc = e
        return _batch_failed(self.session, self.registry, dois, exc)

    def search(self, text: str) -> Fetch:
        """``GET /works?filter=title.search:...&per-page=5``."""
        exc: BaseException | None = None
        ok = False
        try:
            results = self.Works().search_filter(title=text).get(per_page=SEARCH_ROWS)
            ok = isinstance(results, list)
        except (requests.RequestException, ValueError, KeyError, TypeError,
                pyalex.api.QueryError) as e:
            exc = e
        return _classify(self.session, self.registry, "search", text, ok, exc)


def parse_lookup(fetch: Fetch):
    """Registry records held by a cached Fetch: (status, works tuple, detail) for compare."""
    from citeaudit.scholarly.compare import Lookup

    if fetch.outcome != "found":
        return Lookup(fetch.registry, fetch.outcome, (), fetch.detail)
    try:
        body = json.loads(fetch.raw_json or "")
        if fetch.kind == "work":
            work = (records.from_crossref(body) if fetch.registry == "crossref"
                    else records.from_openalex(body))
            return Lookup(fetch.registry, "found", (work,))
        items = (records.crossref_items(body) if fetch.registry == "crossref"
                 else records.openalex_results(body))
        parse = records.from_crossref if fetch.registry == "crossref" else records.from_openalex
        return Lookup(fetch.registry, "found", tuple(parse(i) for i in items[:SEARCH_ROWS]))
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, OverflowError,
            RecursionError) as exc:  # a reply of any shape: invalid, never a crash
        return Lookup(fetch.registry, "invalid", (), f"unparseable:{type(exc).__name__}")
