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
    repeat URLs, mostly close together); the cache is emptied past 10,000 entries (~2 MB).
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
        if len(_URLKEY_CACHE) >= 10_000:
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
    those URLs surt's canonicalisation comes down to lower-casing, dropping a leading
    ``www``, reversing the host labels, a trailing slash and sorting the query arguments;
    ``tests/archive/test_url_keys.py`` checks the keys against ``surt.surt``. Anything
    else returns None and goes to surt (imported only then).
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
        www = _WWW.match(lowered)  # surt drops a leading www., www2., ...
        if www is not None:
            lowered = lowered[www.end():]
        host_key = ",".join(reversed(lowered.split(".")))
        if len(_HOST_KEYS) >= 50_000:
            _HOST_KEYS.clear()
        _HOST_KEYS[host] = host_key
    if query:
        return f"{host_key}){path}?{_sorted_query(query)}"
    return f"{host_key}){path}"


_WWW = re.compile(r"www\d*\.")


def _sorted_query(query: str) -> str:
    """Query arguments in surt's order: sorted as (name,) or (name, value) pairs."""
    if len(query) <= 1:
        return query
    pairs = sorted(tuple(arg.split("=", 1)) for arg in query.split("&"))
    return "&".join("=".join(pair) for pair in pairs)
