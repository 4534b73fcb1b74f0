"""Field-by-field comparison of a citation with registry records, and the combined verdict.

Verdicts (one per citation):

- ``consistent``: a registry record was found and no compared field disagrees;
- ``mismatch``: a record was found and at least one field disagrees with every registry that
  answered (``mismatch_fields`` lists them): lenient across registries on purpose, so a year
  that Crossref and OpenAlex themselves disagree on is not held against the citation;
- ``not_found``: the citation's DOI got a 404 from both registries (a fabricated identifier);
- ``unmatched``: no DOI, and the bibliographic searches of both registries answered but found no
  candidate whose title reaches ``search_similarity`` (weaker evidence than a 404);
- ``unresolved``: nothing to look up (reason ``nothing_to_look_up``), or a registry could not
  answer (timeout, 429/5xx after retries, invalid JSON) where its answer was needed (reason
  ``registry_unreachable``, each registry's own verdict in ``detail``): never a mismatch, never
  a pass.

Each registry's own verdict (``crossref_verdict``, ``openalex_verdict``) takes the same values,
plus ``other_candidate`` (its search found another work than the one kept) and ``skipped``.

Every verdict carries an explanation: per registry and field, the cited value, the registry
value, the similarity (rapidfuzz, 0-100) or year difference, and whether it passed.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz

from citeaudit.scholarly.records import Work, surname

FIELDS = ("title", "first_author", "year", "venue")


@dataclass(frozen=True)
class Thresholds:
    """The codebook's scholarly thresholds (rapidfuzz scores 0-100, years)."""

    title_similarity: float = 90.0
    search_similarity: float = 85.0
    year_tolerance: int = 1

    @classmethod
    def from_codebook(cls, scholarly: Any) -> Thresholds:
        return cls(float(scholarly.title_similarity), float(scholarly.search_similarity),
                   int(scholarly.year_tolerance))


@dataclass(frozen=True)
class Cited:
    """What a citation says about the work it cites."""

    title: str | None = None
    authors: tuple[str, ...] = ()
    year: int | None = None
    venue: str | None = None


@dataclass(frozen=True)
class Lookup:
    """One registry's answer: status 'found', 'not_found', 'error', 'invalid' or 'skipped'.

    ``works`` holds the record (a DOI lookup) or the search results (a search); ``detail`` says
    what went wrong (e.g. 'http_429', 'timeout', 'invalid_json').
    """

    registry: str
    status: str
    works: tuple[Work, ...] = ()
    detail: str = ""

    @property
    def answered(self) -> bool:
        return self.status in ("found", "not_found")


@dataclass
class FieldCheck:
    """One field compared with one registry (ok None: not compared, and why in ``note``)."""

    cited: Any
    registry: Any
    score: float | None
    ok: bool | None
    note: str = ""

    def as_dict(self) -> dict:
        return {"cited": self.cited, "registry": self.registry,
                "score": None if self.score is None else round(self.score, 2),
                "ok": self.ok, **({"note": self.note} if self.note else {})}


@dataclass
class Verdict:
    """The combined verdict for one citation, with everything that explains it."""

    verdict: str
    reason: str
    detail: str | None = None
    candidate_doi: str | None = None
    mismatch_fields: str | None = None
    fields_compared: str = ""
    retracted: bool | None = None
    concern: bool | None = None
    retraction_notice: bool | None = None
    crossref_verdict: str = "skipped"
    openalex_verdict: str = "skipped"
    registries_agree: bool | None = None
    title_similarity: float | None = None
    author_similarity: float | None = None
    year_delta: int | None = None
    venue_similarity: float | None = None
    explanation: dict = field(default_factory=dict)

    def row(self) -> dict:
        out = {k: getattr(self, k) for k in (
            "verdict", "reason", "detail", "candidate_doi", "mismatch_fields",
            "fields_compared", "retracted", "concern", "retraction_notice", "crossref_verdict",
            "openalex_verdict", "registries_agree", "title_similarity", "author_similarity",
            "year_delta", "venue_similarity")}
        out["explanation"] = json.dumps(self.explanation, sort_keys=True, ensure_ascii=False)
        return out


# --------------------------------------------------------------------------- normalization
def norm_text(text: str | None) -> str:
    """Lower case, accents and punctuation removed, single spaces (for fuzzy matching)."""
    if not text:
        return ""
    decomposed = unicodedata.normalize("NFKD", str(text))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(re.sub(r"[^\w]+", " ", plain.lower()).replace("_", " ").split())


def _main_title(title: str) -> str:
    return re.split(r":|\s[-–—]\s", title, maxsplit=1)[0]


STOPWORDS = frozenset({"the", "and", "for", "with", "from", "into", "its", "are", "was", "our",
                       "not", "but", "via", "per", "des", "der", "die", "und", "les", "una"})


def _word_gaps(a: str, b: str) -> list[str]:
    """Content words (3+ letters, not stop words) of either title with no close counterpart
    (rapidfuzz ratio 80, so typos pass) in the other: a substituted word fails a title that a
    character ratio over a long string would still accept."""
    wa = [w for w in a.split() if len(w) > 2 and w not in STOPWORDS]
    wb = [w for w in b.split() if len(w) > 2 and w not in STOPWORDS]
    gaps = []
    for words, other in ((wa, wb), (wb, wa)):
        for w in words:
            if w not in other and not any(fuzz.ratio(w, o) >= 80 for o in other):
                gaps.append(w)
    return gaps


def title_match(cited: str, titles: tuple[str, ...]) -> tuple[float, list[str]]:
    """Best similarity (0-100) of a cited title with a record's titles, and the content words
    that differ for that best variant.

    A cited title without a subtitle is also compared with each title's main part (citations
    often drop the subtitle); a cited title *with* a subtitle must match the full title, so a
    wrong subtitle is a mismatch.
    """
    a = norm_text(cited)
    if not a or not titles:
        return 0.0, []
    has_subtitle = _main_title(cited) != cited
    best: tuple[int, float, list[str]] = (-1, 0.0, [])
    for t in titles:
        for v in ([t] if has_subtitle else [t, _main_title(t)]):
            b = norm_text(v)
            if not b:
                continue
            score = float(max(fuzz.ratio(a, b), fuzz.token_sort_ratio(a, b)))
            gaps = _word_gaps(a, b)
            cand = (-len(gaps), score, gaps)
            if cand[:2] > best[:2]:
                best = cand
    return best[1], best[2]


def title_score(cited: str, titles: tuple[str, ...]) -> float:
    """The similarity part of :func:`title_match`."""
    return title_match(cited, titles)[0]


def author_score(cited_first: str, work: Work) -> float:
    """Similarity of the cited first author's surname with the record's first author."""
    cited_sur = norm_text(surname(cited_first))
    reg_sur = norm_text(work.first_author)
    if not cited_sur or not reg_sur:
        return 0.0
    if cited_sur == reg_sur:
        return 100.0
    # name order differs between cultures and exports: a surname that is a whole word of the
    # other side's full name counts as the same person
    cited_words = set(norm_text(cited_first).split())
    reg_words = set(norm_text(work.first_author_full).split())
    if reg_sur in cited_words or cited_sur in reg_words:
        return 100.0
    return float(fuzz.ratio(cited_sur.replace(" ", ""), reg_sur.replace(" ", "")))


# --------------------------------------------------------------------------- one registry
def compare_work(cited: Cited, work: Work, th: Thresholds) -> dict[str, FieldCheck]:
    """Each field of ``cited`` against one record."""
    out: dict[str, FieldCheck] = {}
    if not cited.title:
        out["title"] = FieldCheck(None, list(work.titles[:1]), None, None, "not_cited")
    elif not work.titles:
        out["title"] = FieldCheck(cited.title, None, None, None, "not_in_record")
    else:
        s, gaps = title_match(cited.title, work.titles)
        out["title"] = FieldCheck(cited.title, work.titles[0], s,
                                  s >= th.title_similarity and not gaps,
                                  f"words_differ:{' '.join(gaps)}" if gaps else "")
    first = cited.authors[0] if cited.authors else None
    if not first:
        out["first_author"] = FieldCheck(None, work.first_author, None, None, "not_cited")
    elif not work.first_author:
        out["first_author"] = FieldCheck(first, None, None, None, "not_in_record")
    else:
        s = author_score(first, work)
        out["first_author"] = FieldCheck(first, work.first_author_full or work.first_author, s,
                                         s >= th.search_similarity)
    if cited.year is None:
        out["year"] = FieldCheck(None, list(work.years), None, None, "not_cited")
    elif not work.years:
        out["year"] = FieldCheck(cited.year, None, None, None, "not_in_record")
    else:
        delta = min(abs(cited.year - y) for y in work.years)
        out["year"] = FieldCheck(cited.year, list(work.years), float(delta),
                                 delta <= th.year_tolerance)
    if not cited.venue:
        out["venue"] = FieldCheck(None, list(work.venues[:1]), None, None, "not_cited")
    elif not work.venues:
        out["venue"] = FieldCheck(cited.venue, None, None, None, "not_in_record")
    else:
        a = norm_text(cited.venue)
        s = max(float(fuzz.token_set_ratio(a, norm_text(v))) for v in work.venues)
        out["venue"] = FieldCheck(cited.venue, list(work.venues[:3]), s,
                                  s >= th.search_similarity)
    return out


def _registry_outcome(checks: dict[str, FieldCheck]) -> str:
    return "mismatch" if any(c.ok is False for c in checks.values()) else "consistent"


def best_candidate(cited: Cited, works: tuple[Work, ...], th: Thresholds
                   ) -> tuple[Work | None, float]:
    """The search result whose title is closest to the cited one, if it reaches the
    codebook's ``search_similarity`` with no differing content word (a near-namesake with
    another subject is another paper); also the best score seen (for the explanation)."""
    best, score, gaps = None, 0.0, ["-"]
    for w in works:
        s, g = title_match(cited.title or "", w.titles)
        if (not g, s) > (not gaps, score):
            best, score, gaps = w, s, g
    return (best if score >= th.search_similarity and not gaps else None), score


# --------------------------------------------------------------------------- combined
def decide(cited: Cited, doi: str | None, crossref: Lookup, openalex: Lookup,
           th: Thresholds) -> Verdict:
    """The verdict for one citation from both registries' answers."""
    lookups = (crossref, openalex)
    expl: dict[str, Any] = {"doi": doi, "thresholds": {
        "title_similarity": th.title_similarity, "search_similarity": th.search_similarity,
        "year_tolerance": th.year_tolerance}}
    for lk in lookups:
        expl[lk.registry] = {"status": lk.status, **({"detail": lk.detail} if lk.detail else {})}
    if doi is None and not cited.title:
        return Verdict("unresolved", "nothing_to_look_up", explanation=expl,
                       crossref_verdict="skipped", openalex_verdict="skipped")

    matched: dict[str, Work] = {}
    reg_outcome: dict[str, str] = {}
    if doi is not None:
        expl["mode"] = "doi"
        for lk in lookups:
            if lk.status == "found" and lk.works:
                matched[lk.registry] = lk.works[0]
            else:
                reg_outcome[lk.registry] = {"not_found": "not_found"}.get(lk.status,
                                                                          "unresolved")
    else:
        expl["mode"] = "search"
        for lk in lookups:
            if lk.status != "found":
                reg_outcome[lk.registry] = "unresolved"
                continue
            cand, score = best_candidate(cited, lk.works, th)
            expl[lk.registry]["best_search_score"] = round(score, 2)
            expl[lk.registry]["candidates"] = len(lk.works)
            if cand is None:
                reg_outcome[lk.registry] = "unmatched"
            else:
                matched[lk.registry] = cand
        if len(matched) == 2 and matched["crossref"].doi != matched["openalex"].doi:
            # two different candidates: keep the closer title (Crossref on a tie)
            keep = max(("crossref", "openalex"),
                       key=lambda r: (title_score(cited.title or "", matched[r].titles),
                                      r == "crossref"))
            other = "openalex" if keep == "crossref" else "crossref"
            expl[other]["candidate_not_used"] = matched[other].doi
            del matched[other]
            reg_outcome[other] = "other_candidate"

    if not matched:
        return _no_record(doi, reg_outcome, expl)

    checks = {reg: compare_work(cited, work, th) for reg, work in matched.items()}
    for reg, cks in checks.items():
        reg_outcome[reg] = _registry_outcome(cks)
        expl[reg]["doi"] = matched[reg].doi
        expl[reg]["fields"] = {f: c.as_dict() for f, c in cks.items()}
        if matched[reg].notices:
            expl[reg]["notices"] = list(matched[reg].notices)
    compared = [f for f in FIELDS if any(c[f].ok is not None for c in checks.values())]
    bad = [f for f in compared if not any(c[f].ok for c in checks.values())]
    works = list(matched.values())

    def best(f: str, worst: bool = False) -> float | None:
        scores = [c[f].score for c in checks.values() if c[f].score is not None]
        if not scores:
            return None
        return min(scores) if worst else max(scores)

    year = best("year", worst=False)
    v = Verdict(
        verdict="mismatch" if bad else "consistent",
        reason=("fields_disagree" if bad else
                ("doi_only" if not compared else "fields_agree")),
        candidate_doi=works[0].doi if doi is None else None,
        mismatch_fields=",".join(bad) if bad else None,
        fields_compared=",".join(compared),
        retracted=any(w.retracted for w in works),
        concern=any(w.concern for w in works),
        retraction_notice=any(w.retraction_notice for w in works),
        title_similarity=best("title"),
        author_similarity=best("first_author"),
        year_delta=None if year is None else int(min(
            c["year"].score for c in checks.values() if c["year"].score is not None)),
        venue_similarity=best("venue"),
        explanation=expl,
    )
    if doi is not None and any(w.doi and w.doi != doi for w in works):
        expl["record_doi_differs"] = [w.doi for w in works]
    v.crossref_verdict = reg_outcome.get("crossref", "skipped")
    v.openalex_verdict = reg_outcome.get("openalex", "skipped")
    v.registries_agree = _agree(v.crossref_verdict, v.openalex_verdict, checks, matched)
    return v


def _no_record(doi: str | None, reg_outcome: dict[str, str], expl: dict) -> Verdict:
    cr, oa = reg_outcome.get("crossref", "skipped"), reg_outcome.get("openalex", "skipped")
    detail = None
    if doi is not None and cr == "not_found" and oa == "not_found":
        verdict, reason = "not_found", "doi_404_in_both_registries"
    elif doi is None and cr == "unmatched" and oa == "unmatched":
        verdict, reason = "unmatched", "no_search_candidate_above_threshold"
    else:
        # here at least one registry could not answer where its answer was needed
        verdict, reason = "unresolved", "registry_unreachable"
        detail = f"crossref={cr},openalex={oa}"
    agree = None if "unresolved" in (cr, oa) else cr == oa
    return Verdict(verdict, reason, detail, crossref_verdict=cr, openalex_verdict=oa,
                   registries_agree=agree, explanation=expl)


def _agree(cr: str, oa: str, checks: dict, matched: dict) -> bool | None:
    """Do Crossref and OpenAlex tell the same story? None when one could not answer."""
    if "unresolved" in (cr, oa) or "skipped" in (cr, oa):
        return None
    if len(matched) == 2:
        same_fields = all(
            (checks["crossref"][f].ok is False) == (checks["openalex"][f].ok is False)
            for f in FIELDS)
        return matched["crossref"].doi == matched["openalex"].doi and same_fields
    return cr == oa
