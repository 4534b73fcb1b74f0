"""URL keys: the cleaned target URI and its SURT key, as pywb/cdxj-indexer compute them.

Why here: every capture row is looked up by its SURT ``urlkey``, and computing it is the
single most expensive step per record, so the cleaning, the keying and its memo live together
in one small module with no other dependencies.
"""

from __future__ import annotations

import re


def clean_target_uri(uri: str | None) -> str | None:
    """Strip wget 1.19's ``<...>`` and percent-encode spaces, as warcio/pywb do."""
    if uri is None:
        return None
    if uri.startswith("<") and uri.endswith(">"):
        uri = uri[1:-1]
    if " " in uri:
        uri = uri.replace(" ", "%20")
    return uri


_URLKEY_CACHE: dict[str, str] = {}


def url_to_urlkey(url: str) -> str:
    """SURT key of a URL exactly as pywb/cdxj-indexer compute it (``surt.surt``).

    surt is the single most expensive step per record (~15 us), so plain URLs take
    :func:`_plain_urlkey` (~3 us, the same key) and keys are memoised (revisits and recrawls
    repeat URLs); the cache is emptied past 50,000 entries.
    """
    key = _URLKEY_CACHE.get(url)
    if key is None:
        key = _plain_urlkey(url)
        if key is None:
            import surt

            try:
                key = surt.surt(url)
            except Exception:  # cdxj-indexer falls back to the URL itself
                key = url
        if len(_URLKEY_CACHE) >= 50_000:
            _URLKEY_CACHE.clear()
        _URLKEY_CACHE[url] = key
    return key


_PLAIN_URL = re.compile(
    r"https?://([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*)((?:/[A-Za-z0-9_.~-]*)*)(?:\?([A-Za-z0-9_.~=&-]*))?"
)
_HOST_KEYS: dict[str, str] = {}


def _plain_urlkey(url: str) -> str | None:
    """``surt.surt(url)`` for a plain http(s) URL, without surt's general machinery; else None.

    Plain: lower-case scheme, a DNS host of letters, digits and hyphens with a letter in it
    (so not an IP address surt would rewrite), no user, port or fragment, path and query of
    unreserved characters only (nothing percent-encoded, nothing to escape), no ``.``,
    ``..`` or empty path segment, and no query parameter surt strips as a session id. For
    those URLs surt's canonicalisation comes down to the steps below, which reuse surt's own
    functions for the host (``www`` stripping, reversal) and the query (sorting);
    ``tests/archive/test_url_keys.py`` checks the keys against ``surt.surt``. Anything
    else returns None and goes to surt.
    """
    match = _PLAIN_URL.fullmatch(url)
    if match is None:
        return None
    host, path, query = match.groups()
    if path:
        segments = path.split("/")  # ["", first, ..., last]; "/a/" ends with ""
        if "." in segments or ".." in segments or "" in segments[1:-1]:
            return None
        path = path.lower()
        if len(path) > 1 and path.endswith("/"):
            path = path[:-1]
    else:
        path = "/"
    if query:
        query = query.lower()
        if "sid" in query or "sessionid" in query or "cfid" in query:  # surt strips these
            return None
    host_key = _HOST_KEYS.get(host)
    if host_key is None:
        lowered = host.lower()
        if not any(c.isalpha() for c in lowered):
            return None
        from surt.IAURLCanonicalizer import massageHost
        from surt.URLRegexTransformer import hostToSURT

        host_key = hostToSURT(massageHost(lowered.encode("ascii"))).decode("ascii")
        if len(_HOST_KEYS) >= 50_000:
            _HOST_KEYS.clear()
        _HOST_KEYS[host] = host_key
    if query:
        from surt.IAURLCanonicalizer import alphaReorderQuery

        return f"{host_key}){path}?{alphaReorderQuery(query.encode('ascii')).decode('ascii')}"
    return f"{host_key}){path}"
