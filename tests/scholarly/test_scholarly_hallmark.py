"""The checker over the hallmark reference sets (rpatrik96/hallmark v1.0), through the real
clients and the loopback registry of recorded Crossref/OpenAlex responses.

No hallmark DOI has a recorded response in ../shared/corpora/scholarly (checked below), so the
registry the checker sees knows none of these works: a DOI it is given gets 404 from both
registries (``not_found``) and a title search finds no strong candidate (``unmatched``). What
the run does show: every reference is parsed, every DOI normalized or explained, no reference
is ever ``consistent``/``mismatch`` against a record it does not match, and a reference without
a DOI is never called ``not_found`` (a failed search is weaker evidence than a 404).
Run with ``-s`` to print the per-file table.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from citeaudit.scholarly import clients, compare
from citeaudit.scholarly.cache import RecordStore
from citeaudit.scholarly.check import crossref_query
from citeaudit.scholarly.doi import citation_doi, normalize
from citeaudit.scholarly.mirror import RegistryMirror
from citeaudit.scholarly.transport import RegistrySession

TH = compare.Thresholds(90, 85, 1)
FILES = ("gptzero_neurips2025", "llm_generated", "real_world_incidents",
         "supplement_chatgpt_citations", "test_public")


def _cited(fields: dict) -> compare.Cited:
    authors = tuple(a.strip() for a in str(fields.get("author") or "").split(" and ")
                    if a.strip())
    try:
        year = int(str(fields.get("year") or "").strip()[:4])
    except ValueError:
        year = None
    venue = fields.get("journal") or fields.get("booktitle")
    return compare.Cited((fields.get("title") or "").strip("{} ") or None, authors, year, venue)


@pytest.fixture(scope="module")
def hallmark(corpora):
    root = corpora / "references" / "hallmark" / "v1.0"
    return {name: [json.loads(line) for line in (root / f"{name}.jsonl").open()]
            for name in FILES}


@pytest.fixture(scope="module")
def recorded(corpora):
    s = corpora / "scholarly"
    dois = set()
    for path in list((s / "crossref-works").glob("*.json")) + \
            list((s / "openalex-works").glob("*.json")):
        body = json.loads(path.read_text())
        dois.add(normalize((body.get("message") or {}).get("DOI") or body.get("doi")))
    return dois


def test_hallmark_dois_are_extracted_and_none_has_a_recorded_response(hallmark, recorded):
    found = Counter()
    for name, refs in hallmark.items():
        for ref in refs:
            f = citation_doi(ref["fields"].get("doi"), ref["fields"].get("url"))
            found[(name, f.source, f.note)] += 1
            assert f.doi is None or f.doi not in recorded
    assert found[("llm_generated", "field", "")] == 251
    # the one DOI field that is not a DOI: a ChatGPT placeholder '10.XXXX/xxxxx'
    assert found[("llm_generated", "none", "doi_field_not_a_doi")] == 1
    assert found[("test_public", "field", "")] == 384
    assert found[("gptzero_neurips2025", "field", "")] == 4


def test_checker_over_hallmark_against_the_recorded_registry(corpora, hallmark):
    s = corpora / "scholarly"
    table: dict[str, Counter] = {}
    with RegistryMirror([s / "crossref-works"], [s / "openalex-works"]) as m:
        kw = dict(timeout=2, max_retries=1, backoff=0.01, per_second=500)
        store = RecordStore({}, {
            "crossref": clients.CrossrefClient(
                RegistrySession(clients.CROSSREF_ORIGIN, m.crossref_url, **kw)),
            "openalex": clients.OpenAlexClient(
                RegistrySession(clients.OPENALEX_ORIGIN, m.openalex_url, **kw)),
        }, refresh_days=30)
        for name in ("gptzero_neurips2025", "real_world_incidents", "llm_generated"):
            counts = table.setdefault(name, Counter())
            for ref in hallmark[name]:
                cited = _cited(ref["fields"])
                f = citation_doi(ref["fields"].get("doi"), ref["fields"].get("url"))
                if f.doi:
                    cr, oa = (store.get(r, "work", f.doi) for r in ("crossref", "openalex"))
                elif cited.title:
                    cr = store.get("crossref", "search", crossref_query(cited))
                    oa = store.get("openalex", "search", cited.title)
                else:
                    cr = oa = None
                v = compare.decide(
                    cited, f.doi,
                    clients.parse_lookup(cr) if cr else compare.Lookup("crossref", "skipped"),
                    clients.parse_lookup(oa) if oa else compare.Lookup("openalex", "skipped"),
                    TH)
                counts[(ref["label"], "doi" if f.doi else "no_doi", v.verdict)] += 1
                assert v.verdict in ("not_found", "unmatched"), (ref["fields"], v.explanation)
                assert f.doi or v.verdict != "not_found"
        requests = store.counts["requests"]
    for name, counts in table.items():
        print(f"\n{name}: " + ", ".join(f"{k}={n}" for k, n in sorted(counts.items())))
    print(f"requests: {requests}")
    assert sum(table["gptzero_neurips2025"].values()) == 98
