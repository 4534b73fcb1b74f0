"""``metadata_checks`` and ``claim_independence`` for one observation date.

The citations to check are selected in SQL; each distinct identifier or search is looked up
once per registry (through the :class:`~citeaudit.scholarly.cache.RecordStore`: DOIs in lists,
searches one per request; the two registries in two threads, as they are independent services
with their own rate limits), each distinct (DOI, cited fields) combination is compared once, as
soon as its records are in (while the other lookups go on), and the verdicts are joined back to
every citation that carries them.
"""

from __future__ import annotations

import queue
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from urllib.parse import urlsplit

import pyarrow as pa

from citeaudit import duck
from citeaudit.scholarly import compare
from citeaudit.scholarly.cache import ANSWERED, RecordStore
from citeaudit.scholarly.clients import parse_lookup
from citeaudit.scholarly.doi import find_in_text, find_in_url, normalize
from citeaudit.scholarly.records import surname

CHECK_SCHEMA = pa.schema([
    ("answer_id", pa.string()), ("claim_id", pa.string()), ("citation_id", pa.string()),
    ("doi", pa.string()), ("doi_source", pa.string()), ("doi_note", pa.string()),
    ("candidate_doi", pa.string()), ("verdict", pa.string()), ("reason", pa.string()),
    ("detail", pa.string()), ("mismatch_fields", pa.string()), ("fields_compared", pa.string()),
    ("retracted", pa.bool_()), ("retraction_status", pa.string()),
    ("expression_of_concern", pa.bool_()), ("retraction_notice", pa.bool_()),
    ("crossref_verdict", pa.string()), ("openalex_verdict", pa.string()),
    ("registries_agree", pa.bool_()), ("title_similarity", pa.float64()),
    ("author_similarity", pa.float64()), ("year_delta", pa.int32()),
    ("venue_similarity", pa.float64()), ("explanation", pa.string()),
    ("answer_age_days", pa.int32()),
])
VERDICTS = ("consistent", "mismatch", "not_found", "unmatched", "unresolved")
VERDICT_COLUMNS = frozenset(CHECK_SCHEMA.names) - {"answer_id", "claim_id", "citation_id", "doi",
                                                  "doi_source", "doi_note"}


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


def _doi_maps(cites: pa.Table) -> tuple[pa.Table, pa.Table]:
    """DOI normalization once per distinct ``doi`` field value and per distinct URL."""
    fields = sorted({v for v in cites.column("doi").to_pylist() if v is not None})
    doi_map = pa.table({"doi_field": pa.array(fields, pa.string()),
                        "doi": pa.array([normalize(v) or find_in_text(v) for v in fields],
                                        pa.string())})
    urls = sorted({v for v in cites.column("url").to_pylist() if v is not None})
    found = [(u, find_in_url(u)) for u in urls]
    found = [(u, d) for u, d in found if d]
    url_map = pa.table({"url": pa.array([u for u, _ in found], pa.string()),
                        "doi": pa.array([d for _, d in found], pa.string())})
    return doi_map, url_map


def check_citations(citations: pa.Table, store: RecordStore,
                    th: compare.Thresholds) -> pa.Table:
    """One ``metadata_checks`` row per citation with a DOI or scholarly metadata.

    SQL selects the citations and joins the verdicts back; Python normalizes each distinct DOI
    field / URL once and decides each distinct (DOI, cited fields) combination once.
    """
    con = duck.connect()
    con.register("citations", citations)
    cites = duck.query(con, "scholarly/select_scholarly_citations")
    doi_map, url_map = _doi_maps(cites)
    con.register("cites", cites)
    con.register("doi_map", doi_map)
    con.register("url_map", url_map)
    resolved = duck.query(con, "scholarly/resolve_citation_dois")
    con.register("resolved", resolved)
    keys = duck.query(con, "scholarly/select_distinct_cited").to_pylist()
    cited_of = [_cited(k) for k in keys]
    dois = sorted({k["doi"] for k in keys if k["doi"]})
    searches = sorted({c for k, c in zip(keys, cited_of, strict=True)
                       if not k["doi"] and c.title}, key=repr)

    def queries(registry: str) -> list[str]:
        return [crossref_query(c) if registry == "crossref" else c.title or ""
                for c in searches]

    def look_up_dois(registry: str, texts: Sequence[str] = ()) -> None:
        """Every DOI lookup of one registry (and the searches ``texts``, interleaved), once,
        in a stable order."""
        store.prefetch(registry, dois, texts)
        for doi in dois:
            store.get(registry, "work", doi)

    def look_up_searches(registry: str) -> None:
        """Every title search of one registry, once, in a stable order."""
        for text in queries(registry):
            store.get(registry, "search", text)

    def look_up(registry: str) -> None:
        """One registry: its DOI lookups and its searches in two threads when the registry
        allows two requests at a time, else interleaved one at a time in one."""
        client = store.clients.get(registry)
        if client is None or getattr(client, "concurrency", 1) < 2 or not searches:
            look_up_dois(registry, queries(registry))
            look_up_searches(registry)
            return
        with ThreadPoolExecutor(2, thread_name_prefix=f"{registry}-lookups") as inner:
            for f in [inner.submit(look_up_dois, registry),
                      inner.submit(look_up_searches, registry)]:
                f.result()

    def needs(key: dict, cited: compare.Cited) -> tuple[tuple[str, str, str], ...]:
        """The records a key's verdict reads (none: nothing to look up)."""
        if key["doi"]:
            return tuple((r, "work", key["doi"]) for r in ("crossref", "openalex"))
        if cited.title:
            return (("crossref", "search", crossref_query(cited)),
                    ("openalex", "search", cited.title or ""))
        return ()

    def decide(key: dict, cited: compare.Cited) -> dict:
        doi = key["doi"]
        if doi:
            cr, oa = (parse_lookup(store.get(r, "work", doi)) for r in ("crossref", "openalex"))
        elif cited.title:
            cr = parse_lookup(store.get("crossref", "search", crossref_query(cited)))
            oa = parse_lookup(store.get("openalex", "search", cited.title))
        else:
            cr, oa = compare.Lookup("crossref", "skipped"), compare.Lookup("openalex", "skipped")
        v = compare.decide(cited, doi, cr, oa, th)
        r = v.row()
        r.pop("concern")
        return {**key, **r, "retraction_status": _retraction_status(v),
                "expression_of_concern": v.concern, "answer_age_days": age(key, cited)}

    def age(key: dict, cited: compare.Cited) -> int | None:
        """The age of the oldest registry answer the verdict read (None: no answer read)."""
        ages = [store.age(c) for c in (store.used.get(i) for i in needs(key, cited))
                if c is not None and c.fetch.outcome in ANSWERED]
        return max(ages) if ages else None

    # the lookups run in their threads; meanwhile each key is decided here as soon as the last
    # record it reads has arrived, so the comparisons overlap the rate-limited waits instead
    # of following them (the verdicts do not depend on when a key is decided)
    verdicts: list[dict | None] = [None] * len(keys)
    while not store.arrivals.empty():
        store.arrivals.get()  # announced before this check began: counted from ``used`` below
    missing: dict[int, int] = {}
    waiters: dict[tuple[str, str, str], list[int]] = {}
    for i, (key, cited) in enumerate(zip(keys, cited_of, strict=True)):
        absent = [ident for ident in needs(key, cited) if ident not in store.used]
        for ident in absent:
            waiters.setdefault(ident, []).append(i)
        if absent:
            missing[i] = len(absent)
        else:
            verdicts[i] = decide(key, cited)

    def arrived(ident: tuple[str, str, str]) -> None:
        for i in waiters.pop(ident, ()):
            missing[i] -= 1
            if not missing[i]:
                verdicts[i] = decide(keys[i], cited_of[i])

    with ThreadPoolExecutor(2, thread_name_prefix="registry") as pool:
        lookups = [pool.submit(look_up, r) for r in ("crossref", "openalex")]
        while waiters and not all(f.done() for f in lookups):
            try:
                ident = store.arrivals.get(timeout=0.2)
            except queue.Empty:
                continue
            arrived(ident)
        for f in lookups:
            f.result()
    while not store.arrivals.empty():
        arrived(store.arrivals.get())
    rows = [v if v is not None else decide(k, c)
            for v, k, c in zip(verdicts, keys, cited_of, strict=True)]
    key_schema = resolved.schema
    schema = pa.schema([key_schema.field(n) for n in ("doi", "title", "authors", "year",
                                                      "venue")]
                       + [f for f in CHECK_SCHEMA if f.name in VERDICT_COLUMNS])
    con.register("verdicts", pa.Table.from_pylist(rows, schema=schema))
    out = duck.query(con, "scholarly/join_metadata_checks")
    return out.cast(CHECK_SCHEMA)


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
