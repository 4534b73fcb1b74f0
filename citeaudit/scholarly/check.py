"""``metadata_checks`` and ``claim_independence`` for one observation date.

The citations to check are selected in SQL; each distinct identifier or search is looked up
once per registry (through the :class:`~citeaudit.scholarly.cache.RecordStore`), each distinct
(DOI, cited fields) combination is compared once, and the verdicts are joined back to every
citation that carries them.
"""

from __future__ import annotations

from functools import cache
from urllib.parse import urlsplit

import pyarrow as pa

from citeaudit import duck
from citeaudit.scholarly import compare
from citeaudit.scholarly.cache import RecordStore
from citeaudit.scholarly.clients import parse_lookup
from citeaudit.scholarly.doi import citation_doi, find_in_url
from citeaudit.scholarly.records import surname

CHECK_SCHEMA = pa.schema([
    ("answer_id", pa.string()), ("claim_id", pa.string()), ("citation_id", pa.string()),
    ("doi", pa.string()), ("doi_source", pa.string()), ("doi_note", pa.string()),
    ("candidate_doi", pa.string()), ("outcome", pa.string()), ("reason", pa.string()),
    ("mismatch_fields", pa.string()), ("fields_compared", pa.string()),
    ("retracted", pa.bool_()), ("retraction_status", pa.string()),
    ("expression_of_concern", pa.bool_()), ("retraction_notice", pa.bool_()),
    ("crossref_outcome", pa.string()), ("openalex_outcome", pa.string()),
    ("registries_agree", pa.bool_()), ("title_similarity", pa.float64()),
    ("author_similarity", pa.float64()), ("year_delta", pa.int32()),
    ("venue_similarity", pa.float64()), ("explanation", pa.string()),
])
OUTCOMES = ("consistent", "mismatch", "not_found", "unmatched", "unresolvable")


def crossref_query(cited: compare.Cited) -> str:
    """Crossref's ``query.bibliographic``: title, first-author surname and year."""
    parts = [cited.title or ""]
    if cited.authors:
        parts.append(surname(cited.authors[0]) or "")
    if cited.year:
        parts.append(str(cited.year))
    return " ".join(p for p in parts if p).strip()


def _cited(row: dict) -> compare.Cited:
    authors = tuple(a for a in (row.get("authors") or []) if isinstance(a, str) and a.strip())
    year = row.get("year")
    try:
        year = int(year) if year is not None else None
    except (TypeError, ValueError):
        year = None
    title = (row.get("title") or "").strip() or None
    venue = (row.get("venue") or "").strip() or None
    return compare.Cited(title, authors, year, venue)


def _retraction_status(v: compare.Verdict) -> str:
    if v.retracted is None:
        return "unknown"
    if v.retracted:
        return "retracted"
    if v.concern:
        return "expression_of_concern"
    return "none"


def check_citations(citations: pa.Table, store: RecordStore,
                    th: compare.Thresholds) -> pa.Table:
    """One ``metadata_checks`` row per citation with a DOI or scholarly metadata."""
    con = duck.connect()
    con.register("citations", citations)
    rows = duck.query(con, "scholarly/select_scholarly_citations").to_pylist()
    prepared = []
    for row in rows:
        found = citation_doi(row.get("doi"), row.get("url"))
        prepared.append((row, found, _cited(row)))
    # look every identifier / search up once, in a stable order
    dois = sorted({f.doi for _, f, _ in prepared if f.doi})
    searches = sorted({c for _, f, c in prepared if not f.doi and c.title}, key=repr)
    for doi in dois:
        for registry in ("crossref", "openalex"):
            store.get(registry, "work", doi)
    for cited in searches:
        store.get("crossref", "search", crossref_query(cited))
        store.get("openalex", "search", cited.title or "")

    @cache
    def verdict(doi: str | None, cited: compare.Cited) -> compare.Verdict:
        if doi:
            cr = store.get("crossref", "work", doi)
            oa = store.get("openalex", "work", doi)
        elif cited.title:
            cr = store.get("crossref", "search", crossref_query(cited))
            oa = store.get("openalex", "search", cited.title)
        else:
            return compare.decide(cited, None, compare.Lookup("crossref", "skipped"),
                                  compare.Lookup("openalex", "skipped"), th)
        return compare.decide(cited, doi, parse_lookup(cr), parse_lookup(oa), th)

    out = []
    for row, found, cited in prepared:
        v = verdict(found.doi, cited)
        r = v.row()
        r.pop("concern")
        out.append({
            "answer_id": row["answer_id"], "claim_id": row["claim_id"],
            "citation_id": row["citation_id"], "doi": found.doi, "doi_source": found.source,
            "doi_note": found.note or None, **r,
            "retraction_status": _retraction_status(v),
            "expression_of_concern": v.concern,
        })
    return pa.Table.from_pylist(out, schema=CHECK_SCHEMA)


# --------------------------------------------------------------------------- independence
@cache
def _extractor():
    import tldextract

    # the snapshot bundled with tldextract: never fetch the public suffix list at run time
    # private suffixes too: two github.io or blogspot.com sites are two publishers
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None,
                                 include_psl_private_domains=True)


def origin(url: str | None) -> str | None:
    """The registrable domain of a URL (``www.bbc.co.uk`` → ``bbc.co.uk``); a DOI resolver
    link is its DOI (the resolver is not the source); None without a host."""
    if not url:
        return None
    try:
        host = (urlsplit(str(url)).hostname or "").lower().rstrip(".")
    except ValueError:
        return None
    if not host:
        return None
    if host.endswith("doi.org"):
        doi = find_in_url(url)
        return f"doi:{doi}" if doi else host
    ext = _extractor()(host)
    # a suffix the list does not know (.example, .internal): the last two labels
    return ext.top_domain_under_public_suffix or ".".join(host.split(".")[-2:])


def claim_independence(claims: pa.Table, citations: pa.Table,
                       captures: pa.Table | None) -> pa.Table:
    """One row per claim: citations, and independent sources after merging citations that
    share an origin or (when ``citation_captures`` is available) a payload digest."""
    digest: dict[str, str | None] = {}
    final: dict[str, str | None] = {}
    if captures is not None and "citation_id" in captures.column_names:
        names = set(captures.column_names)
        for r in captures.select([c for c in ("citation_id", "payload_sha256", "final_uri")
                                  if c in names]).to_pylist():
            digest[r["citation_id"]] = r.get("payload_sha256")
            final[r["citation_id"]] = r.get("final_uri")
    cits = citations.select(["claim_id", "citation_id", "url"]).to_pylist()
    keys = pa.Table.from_pylist(
        [{"claim_id": c["claim_id"], "citation_id": c["citation_id"],
          "origin": origin(final.get(c["citation_id"]) or c["url"]),
          "payload_sha256": digest.get(c["citation_id"])} for c in cits],
        schema=pa.schema([("claim_id", pa.string()), ("citation_id", pa.string()),
                          ("origin", pa.string()), ("payload_sha256", pa.string())]))
    con = duck.connect()
    con.register("claims", claims.select(["claim_id", "answer_id", "claim_index"]))
    con.register("cite_keys", keys)
    return duck.query(con, "scholarly/count_independent_sources")
