"""The folded pre-search of the wall detector skips no page the original patterns match."""

from __future__ import annotations

import re
import sys

from citeaudit.alignment import page_signals as ps


def test_folding_maps_every_ignorecase_equivalent_of_an_ascii_letter_onto_it() -> None:
    letter = re.compile("[a-z]", re.I)
    missed = []
    for cp in range(sys.maxunicode + 1):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        if letter.fullmatch(c) is None:
            continue
        folded = ps._folded(c)
        if len(folded) != 1 or re.fullmatch(folded, c, re.I) is None or not folded.islower():
            missed.append(hex(cp))
    assert missed == []


def test_folded_pre_search_agrees_with_the_original_patterns() -> None:
    pages = ['<div class="CF-Browser-Verification">', "<p>perimeterX</p>", "ARE YOU A ROBOT?",
             "cf-broWſer-verification", "_İNCAPSULA_resource", "Checking Your Browser Before "
             "Accessing", "<p>an ordinary page about robots</p>", "",
             '"isAccessibleForFree": "FALSE"', '<meta itemprop="isAccessibleForFree" x '
             'content="false">', '"ıſAccessibleForFree": false', '"isAccessibleForFree": true']
    for page in pages:
        folded = ps._folded(page)
        assert len(folded) == len(page)
        assert bool(ps._CHALLENGE_FOLDED.search(folded)) == bool(ps._CHALLENGE.search(page)), page
        if ps._FREE_FALSE.search(page):
            assert "isaccessibleforfree" in folded, page
