"""URL keys: the plain-URL fast path gives exactly ``surt.surt``'s key, or steps aside.

Checked on every target URI of the corpora WARCs, on hand-picked URLs at the edges of what
the fast path accepts, and on many generated URLs near those edges.
"""

from __future__ import annotations

import surt
from hypothesis import given, settings
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator

from citeaudit.archive.index import url_keys, url_to_urlkey

EDGES = [
    "http://example.com", "http://example.com/", "https://Example.COM/A/B/", "http://example.com?",
    "http://example.com/?", "http://www.example.com/x", "http://www2.example.com/x",
    "http://www.com/", "http://wwwexample.com/", "http://example.com/a//b", "http://example.com//",
    "http://example.com/a/./b", "http://example.com/a/../b", "http://example.com/..",
    "http://example.com/x?b=2&a=1", "http://example.com/x?a&a=", "http://example.com/x?&",
    "http://example.com/x?B=1&a=2&A=3", "http://example.com/x?sid=" + "a" * 32,
    "http://example.com/x?jsessionid=" + "A" * 32 + "&b=1",
    "http://example.com/x?ASPSESSIONIDabcdefgh=" + "a" * 24, "http://example.com/x?cfid=1&cftoken=2",
    "http://127.0.0.1/", "http://10.0.0.1/x", "http://1234/x", "http://017.1/", "http://a-b.c-d/",
    "http://example.com:80/", "http://user@example.com/", "http://example.com/#frag",
    "HTTP://example.com/", "ftp://example.com/", "http://example.com/%41", "http://example.com/a b",
    "http://example.com/~user/", "http://ex_ample.com/", "http://-.com/", "http://example.com/a.",
    "http://example.com/.a", "http://example.com/(aaaaaaaaaaaaaaaaaaaaaaaa)/x.aspx",
]


def check(url: str) -> None:
    fast = url_keys._plain_urlkey(url)
    if fast is not None:
        assert fast == surt.surt(url), url
    assert url_to_urlkey(url) == surt.surt(url), url


def test_edges():
    for url in EDGES:
        check(url)
    assert url_keys._plain_urlkey("http://example.com/x?b=2&a=1") == "com,example)/x?a=1&b=2"
    assert url_keys._plain_urlkey("http://127.0.0.1/") is None
    assert url_keys._plain_urlkey("http://example.com/a//b") is None


def test_every_corpora_target_uri(corpora):
    seen = 0
    for path in sorted((corpora / "warc").rglob("*.warc*")):
        try:
            with open(path, "rb") as fh:
                for record in ArchiveIterator(fh):
                    uri = record.rec_headers.get_header("WARC-Target-URI")
                    if uri:
                        check(uri)
                        seen += 1
        except Exception:  # damaged files end early; the URIs read so far were checked
            continue
    assert seen > 300


_piece = st.text(alphabet="abcXYZ019-_.~", min_size=0, max_size=6)
_hosts = st.lists(st.text(alphabet="abW0w9-", min_size=1, max_size=5), min_size=1, max_size=4)


@settings(max_examples=600, deadline=None)
@given(
    scheme=st.sampled_from(["http", "https"]),
    www=st.sampled_from(["", "www.", "www1.", "WWW."]),
    host=_hosts,
    tld=st.sampled_from(["com", "de", "co.uk", "1", "x1"]),
    path=st.lists(_piece, max_size=4),
    slash=st.booleans(),
    query=st.one_of(st.none(), st.lists(st.tuples(_piece, st.one_of(st.none(), _piece)),
                                         max_size=4)),
)
def test_generated_urls(scheme, www, host, tld, path, slash, query):
    url = f"{scheme}://{www}{'.'.join(host)}.{tld}"
    if path or slash:
        url += "/" + "/".join(path) + ("/" if slash and path else "")
    if query is not None:
        url += "?" + "&".join(k if v is None else f"{k}={v}" for k, v in query)
    check(url)
