"""DOI extraction and normalization, including the odd real DOIs of the recorded corpora."""

from __future__ import annotations

import json

import pytest

from citeaudit.scholarly import doi


@pytest.mark.parametrize(("raw", "want"), [
    ("10.1371/JOURNAL.PONE.0020476", "10.1371/journal.pone.0020476"),
    (" https://doi.org/10.7554/eLife.01567. ", "10.7554/elife.01567"),
    ("http://dx.doi.org/10.1002/jor.1100150407", "10.1002/jor.1100150407"),
    ("doi:10.1038/srep16696,", "10.1038/srep16696"),
    ("https://doi.org/10.1890/0012-9658(2006)87%5B2832:TIOPMA%5D2.0.CO;2",
     "10.1890/0012-9658(2006)87[2832:tiopma]2.0.co;2"),
    ("10.1890/0012-9658%25282006%252987%255B2832%253ATIOPMA%255D2.0.CO%253B2",
     "10.1890/0012-9658(2006)87[2832:tiopma]2.0.co;2"),  # doubly encoded
    ("(10.1145/3448016.3452841)", None),  # a leading bracket is not a DOI; find_in_text is
    ("10.12/short", None),  # registrant code too short
    ("not a doi", None),
    (None, None),
])
def test_normalize(raw, want):
    assert doi.normalize(raw) == want


def test_text_strips_sentence_punctuation_but_keeps_balanced_brackets():
    assert doi.find_in_text("as shown (doi:10.1145/3448016.3452841).") == \
        "10.1145/3448016.3452841"
    assert doi.find_in_text("SICI 10.1890/0012-9658(2006)87[2832:TIOPMA]2.0.CO;2.") == \
        "10.1890/0012-9658(2006)87[2832:tiopma]2.0.co;2"


@pytest.mark.parametrize(("url", "want"), [
    ("https://onlinelibrary.wiley.com/doi/full/10.1002/jor.1100150407",
     "10.1002/jor.1100150407"),
    ("https://journals.plos.org/plosone/article?id=10.1371/journal.pone.0020476&type=printable",
     "10.1371/journal.pone.0020476"),
    ("https://www.biorxiv.org/content/10.1101/097196v1.full.pdf", "10.1101/097196"),
    ("https://dl.acm.org/doi/pdf/10.1145/3448016.3452841", "10.1145/3448016.3452841"),
    ("https://link.springer.com/article/10.1007/s00120-007-1345-2",
     "10.1007/s00120-007-1345-2"),
    ("https://www.nature.com/articles/srep16696", None),
    ("https://doi.org/", None),
    ("not a url", None),
])
def test_find_in_url(url, want):
    assert doi.find_in_url(url) == want


def test_citation_doi_prefers_the_field_and_explains_a_bad_one():
    assert doi.citation_doi("10.5555/x.1", "https://doi.org/10.7554/elife.01567") == \
        ("10.5555/x.1", "field", "")
    assert doi.citation_doi("n/a", "https://doi.org/10.7554/elife.01567") == \
        ("10.7554/elife.01567", "url", "doi_field_not_a_doi")
    assert doi.citation_doi(None, "https://example.org/") == (None, "none", "")


def test_every_recorded_doi_normalizes_to_itself(corpora):
    """The DOIs inside the real bodies (a SICI, a Japanese article, a figure...) round-trip."""
    seen = 0
    for path in sorted((corpora / "scholarly" / "openalex-works").glob("*.json")):
        body = json.loads(path.read_text(encoding="utf-8"))
        assert doi.normalize(body["doi"]) == body["doi"].split("doi.org/", 1)[1].lower()
        assert doi.find_in_url(body["doi"]) == doi.normalize(body["doi"])
        seen += 1
    for path in sorted((corpora / "scholarly" / "crossref-works").glob("*.json")):
        msg = json.loads(path.read_text(encoding="utf-8"))["message"]
        assert doi.normalize(msg["DOI"]) == msg["DOI"].lower()
        seen += 1
    assert seen == 40
