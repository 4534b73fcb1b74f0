"""Resources: where the pipeline reads its inputs and writes its outputs."""

from __future__ import annotations

import os

import dagster as dg

from citeaudit import storage
from citeaudit.scholarly.endpoints import RegistrySettings

DEFAULT_RAW = "data/raw"
DEFAULT_DERIVED = "data/derived"


class PathsResource(dg.ConfigurableResource):
    """The raw input folder (answers, warc, annotations, codebooks) and the derived output folder.

    Relative paths resolve against the working directory of the process, as a user expects from
    ``citeaudit run --raw data/raw``. Either may be ``s3://bucket/prefix``: ``raw`` and
    ``derived`` are then :class:`upath.UPath` objects with the same pathlib calls, and the
    parquet, DuckDB and WARC code reads and writes through :mod:`citeaudit.storage`.
    """

    raw_dir: str = DEFAULT_RAW
    derived_dir: str = DEFAULT_DERIVED

    @property
    def raw(self) -> storage.Root:
        storage.use_remote(self.raw_dir)
        return storage.as_root(self.raw_dir)

    @property
    def derived(self) -> storage.Root:
        storage.use_remote(self.derived_dir)
        return storage.as_root(self.derived_dir)


def paths_from_env() -> PathsResource:
    """Paths from CITEAUDIT_RAW / CITEAUDIT_DERIVED, else the project defaults."""
    return PathsResource(
        raw_dir=os.environ.get("CITEAUDIT_RAW", DEFAULT_RAW),
        derived_dir=os.environ.get("CITEAUDIT_DERIVED", DEFAULT_DERIVED),
    )


class _RegistryResource(dg.ConfigurableResource):
    """A scholarly registry client's location and politeness (see citeaudit/scholarly/).

    ``base_url``: "" (default) = offline (cache only), or the demo's loopback registry when the
    raw folder holds ``registry/``; "offline" = cache only; "official" = the official API
    (online: only when a user asks for it); else a mirror's base URL. The contact address
    for the polite pools is read from the environment variable named by ``mailto_env``.
    """

    base_url: str = ""
    mailto_env: str = "CITEAUDIT_MAILTO"
    timeout_seconds: float = 10.0
    max_retries: int = 3
    backoff_seconds: float = 0.5
    backoff_max_seconds: float = 10.0
    requests_per_second: float = 10.0  # single records (Crossref polite pool: 10/s)
    list_requests_per_second: float = 3.0  # lists and searches (Crossref polite pool: 3/s)
    concurrency: int = 2  # DOI lookups and searches side by side (Crossref polite: ≤ 3)

    def settings(self, registry: str) -> RegistrySettings:
        return RegistrySettings(
            registry, self.base_url, os.environ.get(self.mailto_env) or None,
            self.timeout_seconds, self.max_retries, self.backoff_seconds,
            self.backoff_max_seconds, self.requests_per_second,
            self.list_requests_per_second, self.concurrency)


class CrossrefResource(_RegistryResource):
    """Crossref REST API (crossrefapi). Env: CITEAUDIT_CROSSREF_URL, CITEAUDIT_MAILTO."""

    def registry_settings(self) -> RegistrySettings:
        return self.settings("crossref")


class OpenAlexResource(_RegistryResource):
    """OpenAlex API (pyalex). Env: CITEAUDIT_OPENALEX_URL, CITEAUDIT_MAILTO."""

    requests_per_second: float = 10.0  # OpenAlex allows 100/s to anyone; we ask a tenth
    list_requests_per_second: float = 10.0

    def registry_settings(self) -> RegistrySettings:
        return self.settings("openalex")


def registries_from_env() -> dict[str, _RegistryResource]:
    """The registry resources, base URLs from CITEAUDIT_CROSSREF_URL / CITEAUDIT_OPENALEX_URL
    (unset: offline, or the demo's loopback registry; ``official`` to query the real APIs)."""
    return {
        "crossref": CrossrefResource(base_url=os.environ.get("CITEAUDIT_CROSSREF_URL", "")),
        "openalex": OpenAlexResource(base_url=os.environ.get("CITEAUDIT_OPENALEX_URL", "")),
    }
