"""URL keys: the cleaned target URI and its SURT key, as pywb/cdxj-indexer compute them.

Why here: every capture row is looked up by its SURT ``urlkey``, and computing it is the
single most expensive step per record, so the cleaning, the keying and its memo live together
in one small module with no other dependencies.
"""

from __future__ import annotations


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

    surt is the single most expensive step per record (~40 us), so keys are memoised
    (revisits and recrawls repeat URLs); the cache is emptied past 50,000 entries.
    """
    key = _URLKEY_CACHE.get(url)
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
