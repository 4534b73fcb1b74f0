"""Where the registry clients of a run point: the real services, a mirror, the demo's loopback
registry, or nowhere (offline, cache only).

``base_url`` of a registry's settings:

- ``""`` (default): offline, *unless* the raw folder holds ``registry/`` (written by
  ``citeaudit demo-corpus``): then a loopback :class:`~citeaudit.scholarly.mirror.RegistryMirror`
  over that folder is started in-process for the duration of the step and both clients talk to
  it (the demo runs with no network). Nothing leaves the machine unless a user asks;
- ``"offline"``: no requests at all; lookups are answered from the cache or are unresolved;
- ``"official"``: the registry's official API (online);
- anything else: the base URL of a mirror (``https://api.crossref.org`` is replaced by it).

Politeness defaults follow what the registries document (December 2025 on): Crossref's polite
pool (requests carrying ``mailto``) allows 10 single-record requests per second and 3 list
requests (filters, searches) per second, 3 at a time; its public pool 5 and 1 per second, one
at a time. OpenAlex allows at most 100 requests per second to anyone; we ask 10. The official
Crossref API without a ``mailto`` is held to the public pool's limits; a rate a server announces
(``X-Rate-Limit-*``) lowers the configured one (:mod:`citeaudit.scholarly.transport`).

Sources (as of December 2026):

- Crossref, "Announcing changes to REST API rate limits" (blog, 5 November 2025, in force from
  1 December 2025; https://www.crossref.org/blog/announcing-changes-to-rest-api-rate-limits/):
  the per-pool rates and concurrency above;
- Crossref, "Access and authentication"
  (https://www.crossref.org/documentation/retrieve-metadata/rest-api/access-and-authentication/):
  the public, polite (``mailto``) and Metadata Plus pools; limits apply per user and are
  announced in the ``x-rate-limit-limit`` / ``x-rate-limit-interval`` headers, with separate
  concurrent-request limits; a 429 means wait and retry at a lower rate or concurrency;
- OpenAlex, "Rate limits and authentication"
  (https://docs.openalex.org/how-to-use-the-api/rate-limits-and-authentication): at most 100
  requests per second for every user, whatever the cost; a daily credit budget (singletons
  such as ``/works/doi:…`` free, list and filter requests charged, full-text searches more) that
  the checker does not track.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from citeaudit import storage
from citeaudit.scholarly.clients import (
    CROSSREF_ORIGIN,
    OPENALEX_ORIGIN,
    CrossrefClient,
    OpenAlexClient,
)
from citeaudit.scholarly.mirror import RegistryMirror
from citeaudit.scholarly.transport import RegistrySession

CROSSREF_PUBLIC_POOL = {"requests_per_second": 5.0, "list_requests_per_second": 1.0,
                        "concurrency": 1}
OFFLINE = "offline"
OFFICIAL = "official"
DEMO_FOLDER = "registry"


@dataclass(frozen=True)
class RegistrySettings:
    """Politeness and location of one registry (set by the Dagster resources)."""

    registry: str
    base_url: str = ""
    mailto: str | None = None
    timeout_seconds: float = 10.0
    max_retries: int = 3
    backoff_seconds: float = 0.5
    backoff_max_seconds: float = 10.0
    requests_per_second: float = 10.0
    list_requests_per_second: float = 3.0
    concurrency: int = 2

    def public_pool(self) -> RegistrySettings:
        """These settings held to Crossref's public-pool limits (no ``mailto``)."""
        caps = CROSSREF_PUBLIC_POOL
        return replace(
            self,
            requests_per_second=min(self.requests_per_second, caps["requests_per_second"]),
            list_requests_per_second=min(self.list_requests_per_second,
                                         caps["list_requests_per_second"]),
            concurrency=min(self.concurrency, caps["concurrency"]))

    def session(self, base_url: str) -> RegistrySession:
        official = CROSSREF_ORIGIN if self.registry == "crossref" else OPENALEX_ORIGIN
        return RegistrySession(
            official, base_url, timeout=self.timeout_seconds, max_retries=self.max_retries,
            backoff=self.backoff_seconds, backoff_max=self.backoff_max_seconds,
            per_second=self.requests_per_second, list_per_second=self.list_requests_per_second,
            mailto=self.mailto)

    def client(self, base_url: str):
        session = self.session(base_url)
        if self.registry == "crossref":
            client = CrossrefClient(session, timeout=self.timeout_seconds, mailto=self.mailto)
        else:
            client = OpenAlexClient(session)
        client.concurrency = max(1, int(self.concurrency))
        return client


@dataclass
class OpenClients:
    """The clients of a run (a registry absent = offline) and how they were chosen."""

    clients: dict
    modes: dict[str, str]

    def stats(self) -> dict[str, int]:
        out = {}
        for name, client in self.clients.items():
            out[f"{name}_requests"] = client.session.stats.requests
            out[f"{name}_attempts"] = client.session.stats.attempts
        return out


@contextmanager
def open_clients(raw: Path, *settings: RegistrySettings) -> Iterator[OpenClients]:
    """Clients for the registries per their settings (see module doc); a demo mirror is
    stopped on exit."""
    demo_dir = storage.path(raw) / DEMO_FOLDER
    needs_demo = any(s.base_url == "" for s in settings) and demo_dir.is_dir()
    mirror = RegistryMirror.from_raw(demo_dir) if needs_demo else None
    if mirror is not None:
        mirror.start()
    try:
        clients, modes = {}, {}
        for s in settings:
            if s.base_url == OFFLINE or (s.base_url == "" and mirror is None):
                modes[s.registry] = OFFLINE
                continue
            if s.base_url == "":
                url = mirror.crossref_url if s.registry == "crossref" else mirror.openalex_url
                modes[s.registry] = "demo_loopback"
            elif s.base_url == OFFICIAL:
                url = CROSSREF_ORIGIN if s.registry == "crossref" else OPENALEX_ORIGIN
                modes[s.registry] = OFFICIAL
                if s.registry == "crossref" and not s.mailto:
                    s = s.public_pool()
            else:
                url = s.base_url
                modes[s.registry] = "mirror"
            clients[s.registry] = s.client(url)
        yield OpenClients(clients, modes)
    finally:
        if mirror is not None:
            mirror.stop()
