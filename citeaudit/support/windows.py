"""Passage windows: a page's text cut into windows of consecutive sentences, with offsets.

Each distinct page text (``payload_texts``, one row per payload digest) is cut once into
sentences — at sentence punctuation followed by a capital, digit or quote (known abbreviations
and initials excepted) and at line breaks, since the extracted text joins HTML text nodes with
``\\n`` — and a sentence longer than ``MAX_SENTENCE`` code points is cut at the last space
before it. A window is ``window_sentences`` consecutive sentences (stride one), so a claim a
page states across two sentences is still one passage. Offsets are 0-based code points into the
page text, end exclusive: ``text[passage_start:passage_end] == passage_text``.
"""

from __future__ import annotations

import re

import pyarrow as pa

from citeaudit.support.atoms import ABBREVIATIONS

MAX_SENTENCE = 600
_BREAK = re.compile(r"(?<=[.!?])[\"”’)\]]*[ \t]+(?=[A-Z0-9\"“‘(])|\s*\n\s*")
WINDOW_SCHEMA = pa.schema([
    ("payload_sha256", pa.string()), ("passage_no", pa.int32()),
    ("passage_start", pa.int32()), ("passage_end", pa.int32()), ("passage_text", pa.string()),
])


def _cut_long(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    out = []
    while hi - lo > MAX_SENTENCE:
        cut = text.rfind(" ", lo + 1, lo + MAX_SENTENCE)
        cut = cut if cut > lo else lo + MAX_SENTENCE
        out.append((lo, cut))
        lo = cut + 1 if text[cut:cut + 1] == " " else cut
    out.append((lo, hi))
    return out


def sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans of a page text (non-empty, stripped), in order."""
    spans, start = [], 0
    for m in _BREAK.finditer(text):
        if "\n" not in m.group():
            word = text[start:m.start()].rstrip("\"”’)]").rsplit(None, 1)
            last = word[-1].rstrip(".!?").lower() if word else ""
            if last in ABBREVIATIONS or len(last) == 1 or re.fullmatch(r"(?:\w\.)+\w?", last):
                continue
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    out = []
    for lo, hi in spans:
        while lo < hi and text[lo].isspace():
            lo += 1
        while hi > lo and text[hi - 1].isspace():
            hi -= 1
        if hi > lo:
            out.extend(_cut_long(text, lo, hi))
    return out


def windows(texts: pa.Table, window_sentences: int) -> pa.Table:
    """The passage windows of every page text with text (``payload_sha256``, ``text``)."""
    cols: dict[str, list] = {name: [] for name in WINDOW_SCHEMA.names}
    rows = sorted((d, t) for d, t in zip(texts.column("payload_sha256").to_pylist(),
                                          texts.column("text").to_pylist(), strict=True)
                  if d is not None and t)
    seen: set[str] = set()
    for digest, text in rows:
        if digest in seen:
            continue
        seen.add(digest)
        spans = sentences(text)
        if not spans:
            continue
        count = max(1, len(spans) - window_sentences + 1)
        for i in range(count):
            lo, hi = spans[i][0], spans[min(i + window_sentences, len(spans)) - 1][1]
            cols["payload_sha256"].append(digest)
            cols["passage_no"].append(i)
            cols["passage_start"].append(lo)
            cols["passage_end"].append(hi)
            cols["passage_text"].append(text[lo:hi])
    return pa.table(cols, schema=WINDOW_SCHEMA)
