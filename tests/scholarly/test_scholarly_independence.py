"""Cross-source independence per claim (the three-layer audit's L3 independence step,
docs/references.md), in SQL over real Arrow tables."""

from __future__ import annotations

import pyarrow as pa

from citeaudit.scholarly.check import claim_independence, origin


def _tables(cits: list[tuple[str, str, str | None]], claims: list[str]):
    claims_t = pa.table({"claim_id": claims, "answer_id": ["a1"] * len(claims),
                         "claim_index": list(range(len(claims)))})
    cits_t = pa.table({"claim_id": [c[0] for c in cits], "citation_id": [c[1] for c in cits],
                       "url": [c[2] for c in cits]})
    return claims_t, cits_t


def test_origins_digests_and_transitivity():
    claims, cits = _tables([
        ("c1", "x1", "https://www.bbc.co.uk/news/1"),
        ("c1", "x2", "https://bbc.co.uk/other"),            # same origin as x1
        ("c1", "x3", "https://news.example.org/a"),          # shares x4's digest
        ("c1", "x4", "https://mirror.example.net/copy"),
        ("c1", "x5", "https://independent.example.com/"),
        ("c2", "y1", "https://doi.org/10.1000/a"),           # resolver links: by DOI
        ("c2", "y2", "https://doi.org/10.1000/b"),
        ("c2", "y3", None),                                  # no key: its own source
        ("c2", "y4", None),
    ], ["c1", "c2", "c3"])
    captures = pa.table({"citation_id": ["x3", "x4", "x5", "x2"],
                         "payload_sha256": ["d1", "d1", "d2", "d2"],  # x2~x5 too: chains
                         "final_uri": [None, None, None, None]})
    rows = {r["claim_id"]: r for r in claim_independence(claims, cits, captures).to_pylist()}
    # x1~x2 (origin), x2~x5 (digest), x3~x4 (digest): two sources
    assert (rows["c1"]["n_citations"], rows["c1"]["n_independent_sources"]) == (5, 2)
    assert rows["c1"]["has_shared_source"]
    assert (rows["c2"]["n_citations"], rows["c2"]["n_independent_sources"]) == (4, 4)
    assert (rows["c3"]["n_citations"], rows["c3"]["n_independent_sources"]) == (0, 0)


def test_without_citation_captures_origins_alone_decide():
    claims, cits = _tables([("c1", "x3", "https://news.example.org/a"),
                            ("c1", "x4", "https://mirror.example.net/copy")], ["c1"])
    rows = claim_independence(claims, cits, None).to_pylist()
    assert rows[0]["n_independent_sources"] == 2 and rows[0]["n_payload_digests"] == 0


def test_origin_is_the_registrable_domain():
    assert origin("https://www.bbc.co.uk/x") == "bbc.co.uk"
    assert origin("https://a.b.github.io/") == "b.github.io"  # a private suffix of the list
    assert origin("https://journals.clinmed-press.example/a") == "clinmed-press.example"
    assert origin("https://doi.org/10.1371/JOURNAL.PONE.0020476") == \
        "doi:10.1371/journal.pone.0020476"
    assert origin(None) is None and origin("not a url") is None
