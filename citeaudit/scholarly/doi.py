"""DOI extraction and normalization.

A DOI is ``10.<registrant>/<suffix>``; the suffix may hold almost any printable character (the
SICI DOI ``10.1890/0012-9658(2006)87[2832:tiopma]2.0.co;2`` has brackets, a colon and a
semicolon). DOIs are case-insensitive, so the normal form is lower case, URL-decoded, without a
resolver prefix (``https://doi.org/``, ``doi:``) and without punctuation that belongs to the
surrounding sentence (a trailing full stop, or a closing bracket with no opening one).

Sources, in order of trust: the citation's own ``doi`` field, then its URL (a resolver link or a
publisher URL that embeds the DOI, e.g. ``/doi/full/10.1002/...`` or ``?id=10.1371/...``).
"""

from __future__ import annotations

import re
from typing import NamedTuple
from urllib.parse import unquote, urlsplit

# Crossref's own advice is /^10.\d{4,9}/[-._;()/:A-Z0-9]+$/i for modern DOIs; older ones (SICI)
# also use <>[]#, so the suffix is "anything that is not whitespace or a quote".
_DOI_IN_TEXT = re.compile(r"10\.\d{4,9}/[^\s\"'<>]+", re.IGNORECASE)
_VALID = re.compile(r"^10\.\d{4,9}/\S+$")
_RESOLVER = re.compile(
    r"^(?:https?://)?(?:dx\.|www\.)?doi\.org/|^doi:\s*|^https?://hdl\.handle\.net/",
    re.IGNORECASE,
)
_TRAILING = ".,;:!?'\"*"
_PAIRS = {")": "(", "]": "[", "}": "{", ">": "<"}
# publisher URL decorations after the DOI: /full, /abstract, /pdf, .full.pdf, bioRxiv versions
_URL_SUFFIX = re.compile(r"(?:/(?:full|abstract|pdf|epdf|fulltext|html)|\.full(?:\.pdf)?|\.pdf"
                         r"|\.abstract)$", re.IGNORECASE)
_BIORXIV_VERSION = re.compile(r"^(10\.1101/[\d.]+)v\d+$")


class FoundDoi(NamedTuple):
    """A normalized DOI and where it came from ('field' or 'url'); note explains a rejection."""

    doi: str | None
    source: str
    note: str


def _strip_trailing(doi: str) -> str:
    """Drop sentence punctuation and unbalanced closing brackets from the end."""
    while doi:
        last = doi[-1]
        if last in _TRAILING or last in _PAIRS and doi.count(last) > doi.count(_PAIRS[last]):
            doi = doi[:-1]
        else:
            break
    return doi


def normalize(value: str | None) -> str | None:
    """The normal form of a DOI string, or None when it is not a DOI.

    >>> normalize(" https://doi.org/10.1371/JOURNAL.PONE.0020476. ")
    '10.1371/journal.pone.0020476'
    >>> normalize("doi:10.1890/0012-9658%282006%2987%5B2832%3ATIOPMA%5D2.0.CO%3B2")
    '10.1890/0012-9658(2006)87[2832:tiopma]2.0.co;2'
    """
    if value is None:
        return None
    text = str(value).strip()
    for _ in range(2):  # doubly-encoded links are common in redirect chains
        if "%" not in text:
            break
        text = unquote(text)
    text = _RESOLVER.sub("", text.strip()).strip()
    text = _strip_trailing(text)
    text = text.lower()
    return text if _VALID.match(text) else None


def find_in_text(text: str | None) -> str | None:
    """The first DOI written anywhere in a piece of text, normalized."""
    if not text:
        return None
    match = _DOI_IN_TEXT.search(unquote(str(text)))
    return normalize(match.group(0)) if match else None


def find_in_url(url: str | None) -> str | None:
    """The DOI a URL carries: a resolver link, or a publisher URL embedding the DOI."""
    if not url:
        return None
    try:
        parts = urlsplit(str(url).strip())
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    path = unquote(parts.path)
    if host.endswith("doi.org") and path.strip("/"):
        # the whole path is the DOI, even characters a text scan would stop at
        return normalize(path.lstrip("/") + (f"?{parts.query}" if parts.query else ""))
    for piece in (path, unquote(parts.query)):
        match = _DOI_IN_TEXT.search(piece)
        if not match:
            continue
        doi = match.group(0).split("&")[0]
        doi = _URL_SUFFIX.sub("", _strip_trailing(doi))
        doi = _BIORXIV_VERSION.sub(r"\1", doi)
        return normalize(doi)
    return None


def citation_doi(doi_field: str | None, url: str | None) -> FoundDoi:
    """The DOI of one citation: its ``doi`` field when valid, else one found in its URL."""
    note = ""
    if doi_field is not None and str(doi_field).strip():
        doi = normalize(doi_field) or find_in_text(doi_field)
        if doi:
            return FoundDoi(doi, "field", "")
        note = "doi_field_not_a_doi"
    from_url = find_in_url(url)
    if from_url:
        return FoundDoi(from_url, "url", note)
    return FoundDoi(None, "none", note)
