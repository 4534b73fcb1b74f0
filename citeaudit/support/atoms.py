"""Atomic statements of a claim: a rule-based, deterministic splitter (the three-layer audit,
docs/references.md#three-layer-audit).

A claim is cut into sentences, then each sentence into coordinated clauses that each carry a
verb (``..., and it rose ...``), so every atom can be looked for in the page on its own. The
rules are the codebook's ``atomization:`` section (versioned with it): which coordinators split,
how many words a clause needs, whether clauses split at all. Numbers and named entities stay
with their clause because a split happens only at a coordinator surrounded by spaces whose two
sides both carry a verb (``Johnson and Johnson`` or ``1, and 2`` never split). Citation markers
(``[1]``, ``[2, 3]``) are blanked in the atom's matching text, keeping offsets: each atom has
its code-point offsets ``[start, end)`` in the claim text.

Atomization runs once per claim in Python (claims are short; the regexes are compiled once);
the per-token work that follows is SQL (``sql/support/``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import pyarrow as pa

from citeaudit.codebook import Atomization

MARKER = re.compile(r"\[\d+(?:\s*[,;–-]\s*\d+)*\]")
# Sentence ends: . ! ? (and closing quotes/brackets) then space then a capital, digit or quote,
# not after a known abbreviation, a single capital (initials, "U.S.") or a number's point.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"”’)\]]*\s+(?=[A-Z0-9\"“‘(])")
ABBREVIATIONS = frozenset({
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "inc",
    "ltd", "co", "corp", "no", "fig", "al", "approx", "est", "jan", "feb", "mar", "apr", "jun",
    "jul", "aug", "sep", "sept", "oct", "nov", "dec", "u.s", "u.k", "u.n", "gov", "dept",
})
VERB_WORDS = frozenset("""
is are was were be been being am has have had having do does did will would shall should can
could may might must cannot can't won't isn't aren't wasn't weren't hasn't haven't hadn't doesn't
didn't includes include included provides provide shows show showed causes cause helps help
increases increase reduces reduce makes make made uses use allows allow requires require
contains contain leads lead led becomes become became remains remain gives give gave takes take
took offers offer found find finds says say said states state suggests suggest means mean
affects affect depends depend involves involve occurs occur exists exist rose rise rises fell
fall falls grew grow grows runs run ran works work needs need seems seem appears appear creates
create supports support explains explain describes describe reported reports report estimated
estimates produces produce consists consist
""".split())  # noqa: SIM905
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")

ATOM_SCHEMA = pa.schema([
    ("claim_id", pa.string()), ("atom_index", pa.int32()), ("atom_start", pa.int32()),
    ("atom_end", pa.int32()), ("atom_text", pa.string()), ("match_text", pa.string()),
    ("atomization_version", pa.string()),
])


@dataclass(frozen=True)
class Atom:
    """One atomic statement: offsets in the claim (end exclusive), its text, its match text."""

    start: int
    end: int
    text: str
    match_text: str


SUBJECTS = frozenset({"it", "he", "she", "this", "that", "which", "who", "one"})


def _has_verb(text: str) -> bool:
    """A known verb, a past form (-ed), or an -s form right after a subject pronoun."""
    words = [w.lower().replace("’", "'") for w in _WORD.findall(text)]
    for i, low in enumerate(words):
        if low in VERB_WORDS or (len(low) > 4 and low.endswith("ed")):
            return True
        if i and words[i - 1] in SUBJECTS and len(low) > 3 and low.endswith("s"):
            return True
    return False


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        before = text[start:m.start()].rstrip("\"”’)]")
        last = before.rsplit(None, 1)[-1] if before.split() else ""
        word = last.rstrip(".!?").lower()
        if word in ABBREVIATIONS or re.fullmatch(r"[A-Za-z]", word) or \
                re.fullmatch(r"(?:[A-Za-z]\.)+[A-Za-z]?", word):
            continue
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    return spans


@cache
def _coordinator_pattern(coordinators: tuple[str, ...]) -> re.Pattern:
    alts = sorted((re.escape(c.strip()) for c in coordinators if c.strip()), key=len,
                  reverse=True)
    return re.compile(r"\s*(?:" + "|".join(alts) + r")\s+") if alts else re.compile(r"(?!x)x")


def _clause_spans(text: str, lo: int, hi: int, rules: Atomization) -> list[tuple[int, int]]:
    """Split [lo, hi) at coordinators whose sides both have a verb and enough words."""
    if not rules.split_clauses:
        return [(lo, hi)]
    pattern = _coordinator_pattern(tuple(rules.coordinators))
    cuts = [lo]
    for m in pattern.finditer(text, lo, hi):
        if m.start() <= cuts[-1]:
            continue
        left, right = text[cuts[-1]:m.start()], text[m.end():hi]
        if (len(_WORD.findall(left)) >= rules.min_clause_words
                and len(_WORD.findall(right)) >= rules.min_clause_words
                and _has_verb(left) and _has_verb(right)):
            cuts.extend((m.start(), m.end()))
    cuts.append(hi)
    return [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts), 2)]


def split(text: str, rules: Atomization) -> list[Atom]:
    """The atoms of one claim text, in order; a claim of only markers/space has none."""
    blanked = MARKER.sub(lambda m: " " * len(m.group()), text)
    atoms: list[Atom] = []
    for s_lo, s_hi in _sentence_spans(blanked):
        for lo, hi in _clause_spans(blanked, s_lo, s_hi, rules):
            while lo < hi and blanked[lo].isspace():
                lo += 1
            while hi > lo and (blanked[hi - 1].isspace() or blanked[hi - 1] in ",;"):
                hi -= 1
            if hi > lo and (_WORD.search(blanked, lo, hi) or re.search(r"\d", blanked[lo:hi])):
                atoms.append(Atom(lo, hi, text[lo:hi], " ".join(blanked[lo:hi].split())))
    return atoms


def atomize(claims: pa.Table, rules: Atomization) -> pa.Table:
    """One row per atom of every claim (``claim_id``, ``text`` columns), sorted by claim."""
    cols: dict[str, list] = {name: [] for name in ATOM_SCHEMA.names}
    ids = claims.column("claim_id").to_pylist()
    texts = claims.column("text").to_pylist()
    for claim_id, text in sorted(zip(ids, texts, strict=True), key=lambda r: r[0]):
        for i, atom in enumerate(split(text or "", rules)):
            cols["claim_id"].append(claim_id)
            cols["atom_index"].append(i)
            cols["atom_start"].append(atom.start)
            cols["atom_end"].append(atom.end)
            cols["atom_text"].append(atom.text)
            cols["match_text"].append(atom.match_text)
            cols["atomization_version"].append(rules.version)
    return pa.table(cols, schema=ATOM_SCHEMA)
