"""The demo's scholarly registry: Crossref and OpenAlex answers for the demo's scholarly sources.

``citeaudit run`` serves ``<raw>/registry/{crossref,openalex}/works/*.json`` from a loopback
server to the real crossrefapi and pyalex clients (``citeaudit.scholarly.endpoints``), so the L3
check runs with no network. Bodies have the registries' real shapes (Crossref's
``{"status": "ok", "message-type": "work", "message": {...}}``, OpenAlex's work object); the
eight real works cited by the demo carry their real Crossref metadata (title, subtitle, first
authors, issue/print/online dates, venue, and the real correction notice of
10.1371/journal.pone.0033693), embedded here because the project never reads ``../shared``.

What is planted, per cited scholarly source (``world.web_source``), and the verdict the checker
must reach (``ground_truth.json`` → ``scholarly.sources``):

- a real DOI with the right metadata → ``consistent``; with a wrong year (off by 2-4), a wrong
  subtitle or another first author → ``mismatch`` of that field;
- a fabricated DOI (Crossref's test prefix 10.5555, absent from both registries) →
  ``not_found``;
- no DOI: about half of these works (those whose title no other cited source shares) are
  registered under a synthetic DOI (DataCite's test prefix 10.5072), so the bibliographic search
  finds them → ``consistent`` with that ``candidate_doi``; a third of the registered ones are
  marked retracted in both registries (Crossref ``updated-by`` retraction, OpenAlex
  ``is_retracted``) → ``retracted``; a third are in Crossref only (OpenAlex's search finds
  nothing) → ``consistent`` with ``registries_agree`` false; the others are in no registry →
  ``unmatched``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

from citeaudit.demo_corpus.world import World, web_source

REGISTERED_PREFIX = "10.5072"


def _date(*parts: int) -> dict:
    return {"date-parts": [list(parts)]}


def _authors(*names: tuple[str, str]) -> list[dict]:
    return [{"given": g, "family": f, "sequence": "first" if i == 0 else "additional",
             "affiliation": []} for i, (g, f) in enumerate(names)]


# Real Crossref metadata of the demo's real works (from api.crossref.org /works/{doi}).
REAL_MESSAGES: tuple[dict, ...] = (
    {"DOI": "10.1371/journal.pone.0020476", "type": "journal-article",
     "title": ["Using and Reporting the Delphi Method for Selecting Healthcare Quality "
               "Indicators: A Systematic Review"],
     "container-title": ["PLoS ONE"], "short-container-title": ["PLoS ONE"],
     "publisher": "Public Library of Science (PLoS)", "volume": "6", "issue": "6",
     "page": "e20476", "issued": _date(2011, 6, 9), "published-online": _date(2011, 6, 9),
     "ISSN": ["1932-6203"], "member": "340", "prefix": "10.1371",
     "author": _authors(("Rym", "Boulkedid"), ("Hendy", "Abdoul"), ("Marine", "Loustau"),
                        ("Olivier", "Sibony"))},
    {"DOI": "10.1136/esmoopen-2020-000776", "type": "journal-article",
     "title": ["Phase II study of lenvatinib for metastatic colorectal cancer refractory to "
               "standard chemotherapy: the LEMON study (NCCH1503)"],
     "container-title": ["ESMO Open"], "short-container-title": ["ESMO Open"],
     "publisher": "Elsevier BV", "volume": "5", "issue": "4", "page": "e000776",
     "issued": _date(2020), "published-print": _date(2020), "ISSN": ["2059-7029"],
     "member": "78", "prefix": "10.1016",
     "author": _authors(("Satoru", "Iwasa"), ("Natsuko", "Okita"), ("Aya", "Kuchiba"),
                        ("Gakuto", "Ogawa"))},
    {"DOI": "10.1371/journal.pone.0033693", "type": "journal-article",
     "title": ["Methylphenidate Exposure Induces Dopamine Neuron Loss and Activation of "
               "Microglia in the Basal Ganglia of Mice"],
     "container-title": ["PLoS ONE"], "short-container-title": ["PLoS ONE"],
     "publisher": "Public Library of Science (PLoS)", "volume": "7", "issue": "3",
     "page": "e33693", "issued": _date(2012, 3, 21), "published-online": _date(2012, 3, 21),
     "ISSN": ["1932-6203"], "member": "340", "prefix": "10.1371",
     "updated-by": [{"DOI": "10.1371/annotation/c76da2c1-ccb8-4797-94c1-359d3ceceeda",
                     "type": "correction", "label": "Correction", "source": "publisher",
                     "updated": {"date-parts": [[2012, 5, 8]],
                                 "date-time": "2012-05-08T00:00:00Z",
                                 "timestamp": 1336435200000}}],
     "author": _authors(("Shankar", "Sadasivan"), ("Brooks B.", "Pond"), ("Amar K.", "Pani"),
                        ("Chunxu", "Qu"))},
    {"DOI": "10.1002/jor.1100150407", "type": "journal-article",
     "title": ["Growth hormone secretagogue increases muscle strength during remobilization "
               "after canine hindlimb immobilization"],
     "container-title": ["Journal of Orthopaedic Research"],
     "short-container-title": ["Journal Orthopaedic Research"], "publisher": "Wiley",
     "volume": "15", "issue": "4", "page": "519-527", "issued": _date(1997, 7),
     "published-print": _date(1997, 7), "published-online": _date(2005, 2, 18),
     "ISSN": ["0736-0266", "1554-527X"], "member": "311", "prefix": "10.1002",
     "author": _authors(("Richard L.", "Lieber"), ("Thomas M.", "Jacks"),
                        ("Randall L.", "Mohler"), ("Klaus", "Schleim"))},
    {"DOI": "10.1145/3448016.3452841", "type": "proceedings-article",
     "title": ["Vector Quotient Filters"],
     "subtitle": ["Overcoming the Time/Space Trade-Off in Filter Design"],
     "container-title": ["Proceedings of the 2021 International Conference on Management of "
                         "Data"],
     "publisher": "ACM", "page": "1386-1399", "issued": _date(2021, 6, 9),
     "published-print": _date(2021, 6, 9), "published-online": _date(2021, 6, 18),
     "member": "320", "prefix": "10.1145",
     "author": _authors(("Prashant", "Pandey"), ("Alex", "Conway"), ("Joe", "Durie"),
                        ("Michael A.", "Bender"))},
    {"DOI": "10.7554/elife.01567", "type": "journal-article",
     "title": ["Automated quantitative histology reveals vascular morphodynamics during "
               "Arabidopsis hypocotyl secondary growth"],
     "container-title": ["eLife"], "publisher": "eLife Sciences Publications, Ltd",
     "volume": "3", "issued": _date(2014, 2, 11), "published-online": _date(2014, 2, 11),
     "ISSN": ["2050-084X"], "member": "4374", "prefix": "10.7554",
     "author": _authors(("Martial", "Sankar"), ("Kaisa", "Nieminen"), ("Laura", "Ragni"),
                        ("Ioannis", "Xenarios"))},
    {"DOI": "10.1038/srep16696", "type": "journal-article",
     "title": ["Single-molecule FRET studies on alpha-synuclein oligomerization of "
               "Parkinson\u2019s disease genetically related mutants"],
     "container-title": ["Scientific Reports"], "short-container-title": ["Sci Rep"],
     "publisher": "Springer Science and Business Media LLC", "volume": "5", "issue": "1",
     "issued": _date(2015, 11, 19), "published-online": _date(2015, 11, 19),
     "ISSN": ["2045-2322"], "member": "297", "prefix": "10.1038",
     "author": _authors(("Laura", "Tosatto"), ("Mathew H.", "Horrocks"),
                        ("Alexander J.", "Dear"), ("Tuomas P. J.", "Knowles"))},
    {"DOI": "10.53731/ybhah-9jy85", "type": "posted-content",
     "title": ["The rise of the (science) newsletter"], "publisher": "Front Matter",
     "issued": _date(2023, 10, 4), "member": "31795", "prefix": "10.59350",
     "author": _authors(("Martin", "Fenner"))},
)


def _stable(*parts: object) -> int:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:12], 16)


def crossref_body(message: dict) -> dict:
    """A ``GET /works/{doi}`` body around a work message (Crossref's envelope and keys)."""
    msg = {"indexed": {"date-parts": [[2026, 10, 1]], "date-time": "2026-10-01T00:00:00Z",
                       "timestamp": 1790812800000},
           "reference-count": 0, "content-domain": {"domain": [], "crossmark-restriction": False},
           "source": "Crossref", "is-referenced-by-count": 0, "subtitle": [],
           "short-title": [], "original-title": [], "relation": {}, "score": 1,
           "references-count": 0, "resource": {"primary": {"URL": f"https://doi.org/"
                                                           f"{message['DOI']}"}},
           "URL": f"https://doi.org/{message['DOI']}", **message}
    return {"status": "ok", "message-type": "work", "message-version": "1.0.0",
            "message": msg}


def openalex_body(message: dict, work_id: int, retracted: bool = False) -> dict:
    """The OpenAlex work object of the same work (OpenAlex's keys, values from Crossref's)."""
    doi = message["DOI"]
    year = message["issued"]["date-parts"][0][0]
    parts = message["issued"]["date-parts"][0] + [1, 1]
    title = message["title"][0]
    venue = (message.get("container-title") or [None])[0]
    source = None if venue is None else {
        "id": f"https://openalex.org/S{4000000000 + _stable(venue) % 10**8}",
        "display_name": venue, "issn_l": (message.get("ISSN") or [None])[0],
        "issn": message.get("ISSN"), "type": "journal" if "journal" in message["type"]
        else "conference", "host_organization_name": message.get("publisher")}
    ships = []
    for i, a in enumerate(message.get("author") or []):
        name = f"{a.get('given', '')} {a['family']}".strip()
        author_id = f"https://openalex.org/A{5000000000 + _stable(name) % 10**8}"
        ships.append({"author_position": "first" if i == 0 else "middle",
                      "author": {"id": author_id, "display_name": name, "orcid": None},
                      "institutions": [], "countries": [], "is_corresponding": i == 0,
                      "raw_author_name": name, "raw_affiliation_strings": []})
    if len(ships) > 1:
        ships[-1]["author_position"] = "last"
    location = {"is_oa": False, "landing_page_url": f"https://doi.org/{doi}", "pdf_url": None,
                "source": source, "license": None, "version": "publishedVersion"}
    kind = {"journal-article": "article", "proceedings-article": "article",
            "posted-content": "preprint"}.get(message["type"], "article")
    return {
        "id": f"https://openalex.org/W{work_id}", "doi": f"https://doi.org/{doi}",
        "title": title, "display_name": title, "publication_year": year,
        "publication_date": f"{parts[0]:04d}-{parts[1]:02d}-{parts[2]:02d}",
        "ids": {"openalex": f"https://openalex.org/W{work_id}", "doi": f"https://doi.org/{doi}"},
        "language": "en", "primary_location": location, "type": kind,
        "indexed_in": ["crossref"], "open_access": {"is_oa": False, "oa_status": "closed"},
        "authorships": ships, "is_retracted": retracted, "is_paratext": False,
        "cited_by_count": 0, "biblio": {"volume": message.get("volume"),
                                        "issue": message.get("issue"),
                                        "first_page": None, "last_page": None},
        "locations_count": 1, "locations": [location], "referenced_works": [],
        "related_works": [], "updated_date": "2026-10-01T00:00:00",
        "created_date": "2016-06-24T00:00:00",
    }


def _norm_title(title: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", title.lower()).split())


def _synthetic_message(doi: str, title: str, authors: tuple[str, ...], year: int, venue: str,
                       retracted: bool) -> dict:
    names = []
    for a in authors:
        given, _, family = a.rpartition(" ")
        names.append((given, family))
    msg = {"DOI": doi, "type": "journal-article", "title": [title], "container-title": [venue],
           "publisher": "Demo Scholarly Press", "issued": _date(year),
           "published-online": _date(year), "member": "0", "prefix": REGISTERED_PREFIX,
           "author": _authors(*names)}
    if retracted:
        msg["updated-by"] = [{"DOI": f"{doi}.retraction", "type": "retraction",
                              "label": "Retraction", "source": "publisher",
                              "updated": {"date-parts": [[year + 1, 3, 1]]}}]
    return msg


def _file_name(doi: str) -> str:
    return re.sub(r"[^\w.-]+", "_", doi) + ".json"


def write_registry(out: Path, world: World, cited_web: list) -> dict:
    """Write ``registry/`` for the cited scholarly sources; return ground truth."""
    root = out / "registry"
    sources = []
    for g in range(world.scale.n_web):
        if any(day[g] for day in cited_web):
            src = web_source(world, g)
            if src.scholarly is not None:
                sources.append(src)
    titles = Counter(_norm_title(s.scholarly[0]) for s in sources)
    # DOI -> (Crossref message, retracted, registered in Crossref only)
    messages: dict[str, tuple[dict, bool, bool]] = {m["DOI"]: (m, False, False)
                                                    for m in REAL_MESSAGES}
    truth = []
    for src in sources:
        title, authors, year, venue, doi = src.scholarly
        defect = src.scholarly_defect
        row = {"source_id": src.source_id, "defect": defect or "none", "doi": doi or None,
               "candidate_doi": None, "retracted": False, "mismatch_fields": None,
               "registries_agree": True}
        if defect in ("year", "title", "first_author"):
            row.update(verdict="mismatch", mismatch_fields=defect)
        elif defect == "fabricated_doi":
            row.update(verdict="not_found", retracted=None)
        elif defect == "no_doi":
            pick = _stable(world.seed, "registered", src.source_id) % 6
            if titles[_norm_title(title)] == 1 and pick < 3:
                cand = f"{REGISTERED_PREFIX}/demo.{src.source_id.removeprefix('src-')}"
                retracted, crossref_only = pick == 0, pick == 1
                messages[cand] = (_synthetic_message(cand, title, authors, year, venue,
                                                     retracted), retracted, crossref_only)
                row.update(verdict="consistent", candidate_doi=cand, retracted=retracted,
                           defect="no_doi_registered", registries_agree=not crossref_only)
            else:
                row.update(verdict="unmatched", retracted=None)
        else:
            row.update(verdict="consistent")
        truth.append(row)
    for reg in ("crossref", "openalex"):
        (root / reg / "works").mkdir(parents=True, exist_ok=True)
    for k, (doi, (msg, retracted, crossref_only)) in enumerate(sorted(messages.items())):
        bodies = [("crossref", crossref_body(msg))]
        if not crossref_only:
            bodies.append(("openalex", openalex_body(msg, 4300000000 + k, retracted)))
        for reg, body in bodies:
            path = root / reg / "works" / _file_name(doi)
            path.write_text(json.dumps(body, ensure_ascii=False, indent=1, sort_keys=True)
                            + "\n", encoding="utf-8", newline="\n")
    truth.sort(key=lambda r: r["source_id"])
    return {
        "registry_works": len(messages),
        "expected_verdicts": dict(sorted(Counter(r["verdict"] for r in truth).items())),
        "retracted_sources": sum(1 for r in truth if r["retracted"]),
        "registries_disagree_sources": sum(1 for r in truth if not r["registries_agree"]),
        "sources": truth,
    }
