"""URL canonicalization: one key per page, however an engine spelled it.

A cited URL and the target URI of a capture must meet on one key. The key is the SURT key pywb
computes (``surt.surt``, the same function the capture index uses, see :mod:`.url_keys`) of
the URL after the steps pywb's key alone does not take: tracking parameters (a codebook glob list:
``utm_*``, ``fbclid``, ``gclid``, ...) removed, wget's ``<...>`` wrapper and surrounding blanks
stripped, inner spaces percent-encoded, scheme and host lower-cased, default ports and the
fragment dropped. Canonicalizing twice changes nothing, and two URLs differing only in tracking
parameters get one key (property-tested).

Unusable input is never guessed at: a missing URL or one without an http(s) scheme and a host
comes back with a reason (``no_url``, ``invalid_url``) and no key.

Why here: the temporal alignment keys cited URLs and capture target URIs with it
(:mod:`citeaudit.alignment.canonical`), and the live crawl plans its fetches with the same keys
(:mod:`citeaudit.archive.capture.crawl`); the crawl runs before the alignment, so the function
lives with the capture index's URL keys.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit, urlunsplit

from citeaudit.archive.index.url_keys import clean_target_uri, url_to_urlkey

DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class Canonical:
    """A canonicalized URL: the URL, its SURT key, or the reason it has neither."""

    url: str | None
    key: str | None
    error: str | None = None


def _strip_tracking(query: str, is_tracking: Callable[[str], bool]) -> str:
    """The query without tracking parameters, other parameters kept byte for byte in order."""
    if not query:
        return ""
    kept = []
    for part in query.split("&"):
        if not part:
            continue
        name = unquote(part.split("=", 1)[0].replace("+", " "))
        if not is_tracking(name):
            kept.append(part)
    return "&".join(kept)


def canonicalize(url: str | None, is_tracking: Callable[[str], bool], strict: bool = False
                 ) -> Canonical:
    """Canonical URL and SURT key of ``url`` (see the module docstring), or a reason.

    ``strict`` (cited URLs): a URL with whitespace or a ``<...>`` wrapper is ``invalid_url``
    rather than repaired: the fail-closed verification rule
    (docs/references.md#fail-closed-verification) calls such a citation malformed, and
    repairing it here would let a malformed citation pass the temporal alignment. Capture
    target URIs are repaired as pywb does.
    """
    if url is None or not url.strip():
        return Canonical(None, None, "no_url")
    if strict and (url.startswith("<") or any(c.isspace() for c in url)):
        return Canonical(None, None, "invalid_url")
    cleaned = clean_target_uri(url.strip())
    assert cleaned is not None
    try:
        parts = urlsplit(cleaned)
        port = parts.port
    except ValueError:
        return Canonical(None, None, "invalid_url")
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in DEFAULT_PORTS or not host or any(c.isspace() for c in host):
        return Canonical(None, None, "invalid_url")
    # an IPv6 literal keeps its brackets (``http://[::1]:8080/``): without them the URL names
    # another host, or none, and the crawl's scope could not judge the address it spells
    netloc = f"[{host}]" if ":" in host else host
    if parts.username or parts.password:
        netloc = parts.netloc.rsplit("@", 1)[0] + "@" + host
    if port is not None and port != DEFAULT_PORTS[scheme]:
        netloc += f":{port}"
    path = parts.path or "/"
    query = _strip_tracking(parts.query, is_tracking)
    canonical = urlunsplit((scheme, netloc, path, query, ""))
    return Canonical(canonical, url_to_urlkey(canonical))
