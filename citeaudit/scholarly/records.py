"""Registry JSON → the fields a citation is compared on.

Crossref (``GET /works/{doi}``: ``{"status": "ok", "message": {...}}``) and OpenAlex
(``GET /works/doi:{doi}``: the work object) name the same facts differently; a :class:`Work`
holds them side by side: titles (with and without subtitle), first-author surname, every year
the record gives (issue, print, online: online-first papers differ by one), venue names, and the
editorial notices (retraction, withdrawal, expression of concern).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any

from citeaudit.scholarly import doi as doi_mod

RETRACTION_TYPES = frozenset({"retraction", "withdrawal", "removal", "partial_retraction"})
CONCERN_TYPES = frozenset({"expression_of_concern", "expression-of-concern"})
_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class Work:
    """One registry record reduced to comparable fields."""

    registry: str
    doi: str | None
    titles: tuple[str, ...]
    first_author: str | None  # surname (family name), as the registry writes it
    first_author_full: str | None
    years: tuple[int, ...]
    venues: tuple[str, ...]
    retracted: bool = False
    concern: bool = False
    retraction_notice: bool = False  # the record IS a notice retracting another work
    notices: tuple[str, ...] = field(default_factory=tuple)


def _clean(text: Any) -> str:
    return " ".join(html.unescape(_TAG.sub(" ", str(text))).split())


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [_clean(value)] if value.strip() else []
    if isinstance(value, list):
        return [_clean(v) for v in value if isinstance(v, str) and v.strip()]
    return []


def _date_year(part: Any) -> int | None:
    try:
        year = part["date-parts"][0][0]
    except (KeyError, IndexError, TypeError):
        return None
    return int(year) if isinstance(year, int) or (isinstance(year, str) and year.isdigit()) \
        else None


def _dedupe(items: list) -> tuple:
    out: list = []
    for item in items:
        if item is not None and item not in out:
            out.append(item)
    return tuple(out)


def surname(name: str | None) -> str | None:
    """The family name in a display name: 'Family, Given' or 'Given Family'."""
    if not name or not str(name).strip():
        return None
    text = " ".join(str(name).split())
    if "," in text:
        return text.split(",", 1)[0].strip() or None
    parts = text.split(" ")
    # keep particles with the surname: "Ludwig van Beethoven" -> "van Beethoven"
    particles = {"van", "von", "der", "den", "de", "del", "della", "da", "di", "du", "le", "la",
                 "ten", "ter", "bin", "al"}
    i = len(parts) - 1
    while i > 0 and parts[i - 1].lower() in particles:
        i -= 1
    return " ".join(parts[i:])


def from_crossref(body: dict) -> Work:
    """A Crossref ``/works/{doi}`` body (or one item of a ``/works?query`` list)."""
    msg = body.get("message", body) if isinstance(body, dict) else {}
    if not isinstance(msg, dict):
        raise ValueError("crossref body has no message object")
    titles = _strings(msg.get("title"))
    subtitles = _strings(msg.get("subtitle"))
    full = [f"{t}: {subtitles[0]}" for t in titles[:1]] if subtitles else []
    authors = [a for a in msg.get("author") or [] if isinstance(a, dict)]
    first = next((a for a in authors if a.get("sequence") == "first"), authors[0] if authors
                 else None)
    family = None
    full_name = None
    if first:
        family = first.get("family") or surname(first.get("name"))
        full_name = " ".join(x for x in (first.get("given"), first.get("family")) if x) or \
            first.get("name")
    years = [_date_year(msg.get(k)) for k in ("issued", "published-print", "published-online",
                                               "published")]
    venues = _strings(msg.get("container-title")) + _strings(msg.get("short-container-title"))
    notices: list[str] = []
    retracted = concern = notice = False
    for upd in msg.get("updated-by") or []:
        kind = str((upd or {}).get("type", "")).lower()
        notices.append(f"updated-by:{kind}:{(upd or {}).get('DOI', '')}")
        retracted |= kind in RETRACTION_TYPES
        concern |= kind in CONCERN_TYPES
    for upd in msg.get("update-to") or []:
        kind = str((upd or {}).get("type", "")).lower()
        notices.append(f"update-to:{kind}:{(upd or {}).get('DOI', '')}")
        notice |= kind in RETRACTION_TYPES
    return Work(
        registry="crossref",
        doi=doi_mod.normalize(msg.get("DOI")),
        titles=_dedupe(titles + full),
        first_author=_clean(family) if family else None,
        first_author_full=_clean(full_name) if full_name else None,
        years=_dedupe(years),
        venues=_dedupe(venues),
        retracted=retracted,
        concern=concern,
        retraction_notice=notice,
        notices=tuple(notices),
    )


def from_openalex(body: dict) -> Work:
    """An OpenAlex work object (``/works/doi:{doi}`` or one of ``/works?filter=...`` results)."""
    if not isinstance(body, dict) or "id" not in body:
        raise ValueError("openalex body is not a work object")
    titles = _strings(body.get("title")) or _strings(body.get("display_name"))
    ships = [a for a in body.get("authorships") or [] if isinstance(a, dict)]
    first = next((a for a in ships if a.get("author_position") == "first"),
                 ships[0] if ships else None)
    name = None
    if first:
        name = (first.get("author") or {}).get("display_name") or first.get("raw_author_name")
    venues: list[str] = []
    for loc in [body.get("primary_location")] + list(body.get("locations") or []):
        source = (loc or {}).get("source") or {}
        venues += _strings(source.get("display_name"))
    year = body.get("publication_year")
    kind = str(body.get("type") or "").lower()
    return Work(
        registry="openalex",
        doi=doi_mod.normalize(body.get("doi")),
        titles=_dedupe(titles),
        first_author=_clean(surname(name)) if name else None,
        first_author_full=_clean(name) if name else None,
        years=_dedupe([int(year)] if isinstance(year, int) else []),
        venues=_dedupe(venues),
        retracted=bool(body.get("is_retracted")),
        concern=False,
        retraction_notice=kind == "retraction",
        notices=("is_retracted",) if body.get("is_retracted") else (),
    )


def crossref_items(body: dict) -> list[dict]:
    """The work items of a Crossref ``/works?query...`` list body."""
    msg = body.get("message") if isinstance(body, dict) else None
    items = msg.get("items") if isinstance(msg, dict) else None
    if not isinstance(items, list):
        raise ValueError("crossref list body has no message.items")
    return [i for i in items if isinstance(i, dict)]


def openalex_results(body: dict) -> list[dict]:
    """The work objects of an OpenAlex ``/works?...`` list body."""
    results = body.get("results") if isinstance(body, dict) else None
    if not isinstance(results, list):
        raise ValueError("openalex list body has no results")
    return [r for r in results if isinstance(r, dict)]
