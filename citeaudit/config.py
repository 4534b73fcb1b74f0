"""The operations config file: ``citeaudit.yaml`` at the root of the raw folder.

What belongs here is *how the pipeline runs on this machine* (whether it may touch the network,
politeness, timeouts, contact address), not judgment rules. Judgment rules live in the codebook,
which is a partition dimension (``date × codebook``); settings that change what a *daily* asset
fetches must not vary by codebook version, so they cannot live there.

The file is optional: without it every section takes its defaults (fetching off). Each top-level
key is a section parsed by its own validator, registered in :data:`SECTIONS` (``fetch:``,
``archives:``, ``replay:``). Unknown sections and keys, wrong types and out-of-range values fail
with a :class:`ConfigError` naming the file and the key, never silently ignored.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from citeaudit import storage

CONFIG_FILE = "citeaudit.yaml"

# Query parameters that only track a click: stripped before a cited URL is fetched.
DEFAULT_STRIP_PARAMS = ("utm_*", "fbclid", "gclid", "dclid", "msclkid", "mc_eid", "mc_cid",
                        "_ga", "yclid", "igshid", "ref_src")


DEFAULT_PORTS = (80, 443, 8080, 8443)
"""Ports a fetched URL may name by default: the web's usual ones (``fetch.allowed_ports``)."""


class ConfigError(ValueError):
    """A config file that cannot be used: the message names the file and the key."""


def _fail(path: Path | str, key: str, message: str) -> ConfigError:
    return ConfigError(f"{path}: {key}: {message}")


@dataclass(frozen=True)
class FetchSettings:
    """The ``fetch:`` section: live capture of cited pages (see citeaudit/archive/fetcher.py).

    ``enabled`` is false by default: ``citeaudit run`` never touches the network unless the
    operator turns it on. ``via`` sends every request to one origin (``http://127.0.0.1:PORT``)
    while keeping the cited URL as the Host and as the WARC target URI.
    """

    enabled: bool = False
    via: str | None = None
    contact: str | None = None
    user_agent: str = "citeaudit/{version} (+{contact})"
    per_host_delay_seconds: float = 1.0
    concurrency: int = 8
    connect_timeout_seconds: float = 10.0
    read_timeout_seconds: float = 30.0
    total_timeout_seconds: float = 120.0
    max_body_bytes: int = 10 * 1024 * 1024
    max_redirects: int = 5
    max_retries: int = 3
    max_retry_after_seconds: float = 120.0
    retry_backoff_seconds: float = 2.0
    allow_hosts: tuple[str, ...] = ()
    deny_hosts: tuple[str, ...] = ()
    reference_window_hours: float = 24.0
    current_after_days: float = 7.0
    warc_max_bytes: int = 1024 * 1024 * 1024
    strip_params: tuple[str, ...] = DEFAULT_STRIP_PARAMS
    operator: str | None = None
    allow_private_networks: bool = False
    allowed_ports: tuple[int, ...] = DEFAULT_PORTS
    soft_404_probe: bool = True
    browser: str = "never"
    browser_executable: str | None = None
    browser_timeout_seconds: float = 60.0
    browser_max_requests: int = 200
    robots_max_age_hours: float = 24.0

    def with_via(self, via: str | None) -> FetchSettings:
        """The same settings with every request sent to ``via`` (None keeps the file's)."""
        return self if via is None else replace(self, via=via)

    def user_agent_string(self, version: str) -> str:
        """The User-Agent header: names citeaudit, its version and the operator's contact."""
        return self.user_agent.format(version=version, contact=self.contact or "no contact")


# key -> (kind, minimum) for the numeric and list fields; kinds: bool, str, float, int, hosts
_FETCH_KINDS: dict[str, tuple[str, float | None]] = {
    "enabled": ("bool", None), "via": ("str?", None), "contact": ("str?", None),
    "user_agent": ("str", None), "operator": ("str?", None),
    "per_host_delay_seconds": ("float", 0.0), "concurrency": ("int", 1),
    "connect_timeout_seconds": ("float", 0.001), "read_timeout_seconds": ("float", 0.001),
    "total_timeout_seconds": ("float", 0.001), "max_body_bytes": ("int", 1),
    "max_redirects": ("int", 0), "max_retries": ("int", 0),
    "max_retry_after_seconds": ("float", 0.0), "retry_backoff_seconds": ("float", 0.0),
    "allow_hosts": ("list", None), "deny_hosts": ("list", None),
    "reference_window_hours": ("float", 0.0), "current_after_days": ("float", 0.0),
    "warc_max_bytes": ("int", 1024), "strip_params": ("list", None),
    "allow_private_networks": ("bool", None), "allowed_ports": ("ports", None),
    "soft_404_probe": ("bool", None), "browser": ("str", None),
    "browser_executable": ("str?", None), "browser_timeout_seconds": ("float", 1.0),
    "browser_max_requests": ("int", 1), "robots_max_age_hours": ("float", 0.0),
}

ROBOTS_MAX_AGE_LIMIT_HOURS = 24.0
"""The longest ``fetch.robots_max_age_hours`` accepted (RFC 9309 section 2.4)."""

BROWSER_MODES = ("never", "auto", "always")
"""``fetch.browser``: ``never`` (static captures only), ``auto`` (render the pages whose static
capture is a script shell, citeaudit/archive/capture/shell.py), ``always`` (render every 2xx
HTML page captured)."""


def _value(path: Path, key: str, kind: str, minimum: float | None, raw: Any) -> Any:
    if kind == "bool":
        if not isinstance(raw, bool):
            raise _fail(path, key, f"expected true or false, got {raw!r}")
        return raw
    if kind in ("str", "str?"):
        if raw is None and kind == "str?":
            return None
        if not isinstance(raw, str) or not raw.strip():
            raise _fail(path, key, f"expected a non-empty string, got {raw!r}")
        return raw.strip()
    if kind == "ports":
        if not isinstance(raw, list) or not raw or not all(
                isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= 65535 for x in raw):
            raise _fail(path, key, f"expected a non-empty list of port numbers (1-65535), "
                        f"got {raw!r}")
        return tuple(raw)
    if kind == "list":
        if not isinstance(raw, list) or not all(isinstance(x, str) and x.strip() for x in raw):
            raise _fail(path, key, f"expected a list of non-empty strings, got {raw!r}")
        return tuple(x.strip().lower() if key.endswith("_hosts") else x.strip() for x in raw)
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise _fail(path, key, f"expected a number, got {raw!r}")
    if kind == "int" and (not isinstance(raw, int)):
        raise _fail(path, key, f"expected a whole number, got {raw!r}")
    if not math.isfinite(raw) or (minimum is not None and raw < minimum):
        raise _fail(path, key, f"must be at least {minimum:g}, got {raw!r}")
    return int(raw) if kind == "int" else float(raw)


def parse_fetch(section: Any, path: Path) -> FetchSettings:
    """Validate the ``fetch:`` mapping into :class:`FetchSettings`."""
    if section is None:
        return FetchSettings()
    if not isinstance(section, dict):
        raise _fail(path, "fetch", f"expected a mapping, got {type(section).__name__}")
    known = {f.name for f in fields(FetchSettings)}
    values: dict[str, Any] = {}
    for key, raw in section.items():
        if key not in known:
            raise _fail(path, f"fetch.{key}", "unknown key (known: " + ", ".join(sorted(known))
                        + ")")
        kind, minimum = _FETCH_KINDS[key]
        values[key] = _value(path, f"fetch.{key}", kind, minimum, raw)
    settings = FetchSettings(**values)
    if settings.browser not in BROWSER_MODES:
        raise _fail(path, "fetch.browser", f"one of {', '.join(BROWSER_MODES)}, got "
                    f"{settings.browser!r}")
    if settings.robots_max_age_hours > ROBOTS_MAX_AGE_LIMIT_HOURS:
        raise _fail(path, "fetch.robots_max_age_hours", f"at most {ROBOTS_MAX_AGE_LIMIT_HOURS:g} "
                    "(RFC 9309: a cached robots.txt should not be used for more than 24 hours), "
                    f"got {settings.robots_max_age_hours:g}")
    if settings.via is not None and not settings.via.startswith(("http://", "https://")):
        raise _fail(path, "fetch.via", f"expected an http(s) origin, got {settings.via!r}")
    if settings.enabled and not settings.contact:
        raise _fail(path, "fetch.contact", "required when fetch.enabled is true (an address "
                    "site operators can reach you at; it goes into the User-Agent)")
    return settings


ARCHIVE_APIS = ("pywb", "wayback", "wayback-availability", "memento")
"""How an archive is asked for the capture closest to a time (see citeaudit/archive/lookup.py):
``pywb`` (pywb / OpenWayback CDX server API at ``<url>/cdx``, raw replay ``<url>/<ts>id_/<uri>``),
``wayback`` (the Wayback Machine's CDX API at ``<url>/cdx/search/cdx``, replay
``<url>/web/<ts>id_/<uri>``), ``wayback-availability`` (its availability API at
``<url>/wayback/available``; replay at the snapshot URL it returns, in ``id_`` form),
``memento`` (an RFC 7089 TimeGate or aggregator at ``<url>/<original URL>``, asked with
``Accept-Datetime``; the memento it redirects to is fetched, in ``id_`` form when its URL has a
14-digit timestamp segment)."""

ARCHIVE_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_]{0,31}$")
"""An archive's name: it goes into file names and the ``archive:<name>`` origin."""


@dataclass(frozen=True)
class ArchiveSettings:
    """One entry of the ``archives:`` list: a public or local web archive asked, in list order,
    for the capture closest to a citation's reference time when no readable capture of the cited
    URL lies inside ``fetch.reference_window_hours`` of it. Politeness, timeouts, retries and
    the User-Agent are those of ``fetch:``. ``no_capture_cache_days``: an index query this
    archive answered with no usable capture is not asked again within that many days (0: always
    ask)."""

    name: str
    api: str
    url: str
    max_candidates: int = 25
    no_capture_cache_days: float = 7.0


def parse_archives(section: Any, path: Path) -> tuple[ArchiveSettings, ...]:
    """Validate the ``archives:`` list (empty by default: no archive is ever asked)."""
    if section is None:
        return ()
    if not isinstance(section, list):
        raise _fail(path, "archives", f"expected a list of archives, got {type(section).__name__}")
    out: list[ArchiveSettings] = []
    known = {f.name for f in fields(ArchiveSettings)}
    for i, entry in enumerate(section):
        where = f"archives[{i}]"
        if not isinstance(entry, dict):
            raise _fail(path, where, f"expected a mapping (name, api, url), got {entry!r}")
        for key in entry:
            if key not in known:
                raise _fail(path, f"{where}.{key}", "unknown key (known: "
                            + ", ".join(sorted(known)) + ")")
        for key in ("name", "api", "url"):
            if key not in entry:
                raise _fail(path, f"{where}.{key}", "required")
        name = _value(path, f"{where}.name", "str", None, entry["name"])
        if not ARCHIVE_NAME_RE.match(name):
            raise _fail(path, f"{where}.name", "lower-case letters, digits and _ (at most 32), "
                        f"got {name!r}")
        if name in {a.name for a in out}:
            raise _fail(path, f"{where}.name", f"duplicate archive name {name!r}")
        api = _value(path, f"{where}.api", "str", None, entry["api"])
        if api not in ARCHIVE_APIS:
            raise _fail(path, f"{where}.api", f"one of {', '.join(ARCHIVE_APIS)}, got {api!r}")
        url = _value(path, f"{where}.url", "str", None, entry["url"]).rstrip("/")
        if not url.startswith(("http://", "https://")):
            raise _fail(path, f"{where}.url", f"expected an http(s) URL, got {url!r}")
        extra = {}
        if "max_candidates" in entry:
            extra["max_candidates"] = _value(path, f"{where}.max_candidates", "int", 1,
                                             entry["max_candidates"])
        if "no_capture_cache_days" in entry:
            extra["no_capture_cache_days"] = _value(
                path, f"{where}.no_capture_cache_days", "float", 0.0,
                entry["no_capture_cache_days"])
        out.append(ArchiveSettings(name=name, api=api, url=url, **extra))
    return tuple(out)


@dataclass(frozen=True)
class ReplaySettings:
    """The ``replay:`` section: a pywb instance serving the project's WARCs (``citeaudit replay``)
    so every aligned capture gets a link ``<base_url>/<collection>/<YYYYMMDDhhmmss>/<url>``."""

    base_url: str | None = None
    collection: str = "citeaudit"

    def link_prefix(self) -> str | None:
        """``<base_url>/<collection>`` or None when replay is not configured."""
        return None if self.base_url is None else f"{self.base_url}/{self.collection}"


def parse_replay(section: Any, path: Path) -> ReplaySettings:
    """Validate the ``replay:`` mapping (off by default: no replay links)."""
    if section is None:
        return ReplaySettings()
    if not isinstance(section, dict):
        raise _fail(path, "replay", f"expected a mapping, got {type(section).__name__}")
    values: dict[str, Any] = {}
    for key, raw in section.items():
        if key not in ("base_url", "collection"):
            raise _fail(path, f"replay.{key}", "unknown key (known: base_url, collection)")
        values[key] = _value(path, f"replay.{key}", "str", None, raw)
    base = values.get("base_url")
    if base is not None:
        if not base.startswith(("http://", "https://")):
            raise _fail(path, "replay.base_url", f"expected an http(s) URL, got {base!r}")
        values["base_url"] = base.rstrip("/")
    if not re.match(r"^[A-Za-z0-9_-]+$", values.get("collection", "citeaudit")):
        raise _fail(path, "replay.collection", "letters, digits, _ and - only")
    return ReplaySettings(**values)


SECTIONS: dict[str, Callable[[Any, Path], Any]] = {
    "fetch": parse_fetch, "archives": parse_archives, "replay": parse_replay}


@dataclass(frozen=True)
class Config:
    """The whole operations config; ``path`` is None when no file exists (all defaults)."""

    path: Path | None = None
    fetch: FetchSettings = field(default_factory=FetchSettings)
    archives: tuple[ArchiveSettings, ...] = ()
    replay: ReplaySettings = field(default_factory=ReplaySettings)


def load(raw: Path) -> Config:
    """``raw/citeaudit.yaml`` validated, or the defaults when the file does not exist."""
    path = storage.path(raw) / CONFIG_FILE
    if not path.is_file():
        return Config()
    return load_file(path)


def load_file(path: Path) -> Config:
    """One config file validated (see the module docstring)."""
    from citeaudit.codebook import CodebookError, load_yaml

    try:
        doc = load_yaml(path.read_bytes())  # size, alias and nesting limits: docs/limits.md
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from exc
    except CodebookError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise ConfigError(f"{path}: expected a mapping of sections at the top level")
    parsed: dict[str, Any] = {}
    for key, section in doc.items():
        if key not in SECTIONS:
            raise _fail(path, str(key), "unknown section (known: " + ", ".join(sorted(SECTIONS))
                        + ")")
        try:
            parsed[key] = SECTIONS[key](section, path)
        except ConfigError:
            raise
        except (TypeError, ValueError, AttributeError, KeyError, OverflowError) as exc:
            raise _fail(path, str(key), f"a value of the wrong type ({type(exc).__name__}: "
                        f"{exc}); the settings are in docs/operations.md") from None
    config = Config(path=path, **parsed)
    if config.archives and not config.fetch.contact:
        raise _fail(path, "fetch.contact", "required when archives are configured (an address "
                    "the archives' operators can reach you at; it goes into the User-Agent)")
    return config
