"""Text helpers shared by the engine importers: offsets and claims from an answer's text.

Offsets in citeaudit's contract are 0-based code points, end exclusive (Python ``str``
indices). Gemini reports UTF-8 byte offsets; :func:`byte_to_char` converts them and refuses an
offset that falls inside a multi-byte character (that is a wrong offset, never rounded).

Claims: an engine marks where a citation sits (OpenAI's link span, Perplexity's ``[n]`` marker)
or which text it supports (Gemini's segment, Anthropic's cited block). :func:`build_claims`
turns that into the contract's claims: explicit spans are claims as given; the rest of the text
is split into sentences, the citation marks are cut out (a link or a marker is not a claim), a
sentence is also cut where a mark sits inside it (the claim is the clause the mark follows), and
each mark attaches to the closest piece that ends at or before it. Pieces nothing cites are
claims without citations, so coverage counts them; markdown headings and pieces without a
letter or digit are not claims, and a leading list marker (``- ``, ``1. ``) is not claim text.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

# A sentence ends at . ! ? (closing quotes or brackets may follow) before whitespace, or at a
# line break. Decimal points and dotted names ("3.5", "node.js") are not followed by a blank; a
# period after an abbreviation or an initial ("U.S.", "St. Louis", "J. Smith") or before a
# lower-case word ends no sentence.
_SENTENCE_END = re.compile(r"""[.!?]+["'”’)\]]*(?=\s)|\n""")
_LAST_WORD = re.compile(r"(\w[\w.]*)\.$")
_NEXT_CHAR = re.compile(r"\s*(\S)")
ABBREVIATIONS = frozenset({
    "mr", "mrs", "ms", "dr", "prof", "st", "sr", "jr", "bros", "inc", "ltd", "co", "corp", "vs",
    "etc", "eg", "ie", "e.g", "i.e", "al", "approx", "dept", "est", "fig", "gov", "gen", "sen",
    "rep", "no", "nos", "vol", "pp", "ed", "eds", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
    "sep", "sept", "oct", "nov", "dec", "mt", "ft",
})
_HEADING = re.compile(r"^\s*#{1,6}\s")
_BULLET = re.compile(r"(?:[-*+•]|\d{1,3}[.)])\s+")
_WORDY = re.compile(r"\w")


def byte_to_char(text: str, offsets: list[int]) -> list[int | None]:
    """Code-point offsets of UTF-8 byte offsets into ``text``; None where an offset is not on a
    character boundary or lies beyond the text."""
    starts = [0]
    for ch in text:
        starts.append(starts[-1] + len(ch.encode("utf-8")))
    out: list[int | None] = []
    for b in offsets:
        i = bisect_right(starts, b) - 1
        out.append(i if 0 <= i < len(starts) and starts[i] == b else None)
    return out


def sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans of ``text`` (code points), whitespace trimmed, empty ones left out."""
    spans, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        if m.group() != "\n" and not _ends_sentence(text, m.start(), m.end()):
            continue
        spans.append((start, m.end()))
        start = m.end()
    spans.append((start, len(text)))
    return [s for s in (trim(text, a, b) for a, b in spans) if s[0] < s[1]]


def _ends_sentence(text: str, start: int, end: int) -> bool:
    """Whether the punctuation at ``[start, end)`` closes a sentence (see ``_SENTENCE_END``)."""
    nxt = _NEXT_CHAR.match(text, end)
    if nxt and nxt.group(1).islower():
        return False
    if text[start] != ".":
        return True
    word = _LAST_WORD.search(text, 0, start + 1)
    if word is None:
        return True
    w = word.group(1)
    return not (w.lower() in ABBREVIATIONS or len(w.rstrip(".")) == 1 or "." in w)


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` without leading or trailing whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def is_claim_text(piece: str) -> bool:
    """A piece of text that states something: not a heading, not punctuation only."""
    return bool(_WORDY.search(piece)) and not _HEADING.match(piece)


@dataclass
class Cite:
    """One citation as an importer found it (the contract's citation fields, ids come later)."""

    url: str
    title: str | None = None
    quote: str | None = None
    year: int | None = None
    extra: dict = field(default_factory=dict)


@dataclass
class Claim:
    """A claim span with the citations that support it, in the order the engine gave them."""

    start: int
    end: int
    cites: list[Cite] = field(default_factory=list)


def _subtract(start: int, end: int, holes: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``[start, end)`` minus the (sorted, possibly overlapping) holes."""
    parts, cur = [], start
    for a, b in holes:
        if b <= cur or a >= end:
            continue
        if a > cur:
            parts.append((cur, a))
        cur = max(cur, b)
    if cur < end:
        parts.append((cur, end))
    return parts


def build_claims(
    text: str,
    spans: list[Claim] | None = None,
    marks: list[tuple[int, int, list[Cite]]] | None = None,
    breaks: list[int] | None = None,
) -> tuple[list[Claim], list[tuple[int, int, list[Cite]]]]:
    """(claims in text order, marks that follow no text).

    ``spans``: claims the engine delimited itself (identical spans are merged, citations kept in
    order). ``marks``: ``(start, end, cites)`` of citation marks in the text (cut out of the
    claims), each attached to the last piece of text that ends at or before ``start``.
    ``breaks``: positions no claim spans (the joins of separately written blocks).
    """
    explicit: dict[tuple[int, int], Claim] = {}
    for c in spans or []:
        explicit.setdefault((c.start, c.end), Claim(c.start, c.end)).cites.extend(c.cites)
    marks = sorted(marks or [], key=lambda m: (m[0], m[1]))
    holes = sorted([(a, b) for a, b in explicit] + [(a, b) for a, b, _ in marks]
                   + [(p, p) for p in breaks or []])
    masked = list(text)
    for a, b, _ in marks:
        masked[a:b] = " " * (b - a)
    pieces: list[Claim] = []
    for s, e in sentences("".join(masked)):
        for a, b in _subtract(s, e, holes):
            a, b = trim(text, a, b)
            bullet = _BULLET.match(text, a, b)
            if bullet:  # a list marker is layout, not part of the claim
                a = bullet.end()
            if a < b and is_claim_text(text[a:b]):
                pieces.append(Claim(a, b))
    pieces.sort(key=lambda c: c.start)
    ends = [p.end for p in pieces]
    orphans = []
    for a, b, cites in marks:
        i = bisect_right(ends, a) - 1
        if i < 0:
            orphans.append((a, b, cites))
        else:
            pieces[i].cites.extend(cites)
    claims = sorted([*explicit.values(), *pieces], key=lambda c: (c.start, c.end))
    return claims, orphans
