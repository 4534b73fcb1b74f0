"""The real crossrefapi and pyalex clients against a loopback server of recorded responses.

The server (``citeaudit.scholarly.mirror``) serves the recorded Crossref and OpenAlex bodies of
``../shared/corpora/scholarly``; every verdict below comes from a real HTTP exchange, parsed by
the real libraries and compared by ``compare.decide``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citeaudit.scholarly import clients, compare, records
from citeaudit.scholarly.mirror import NOT_FOUND_CROSSREF, RegistryMirror
from citeaudit.scholarly.transport import RegistrySession

TH = compare.Thresholds(title_similarity=90, search_similarity=85, year_tolerance=1)
ELIFE = "10.7554/elife.01567"
VQF = "10.1145/3448016.3452841"


@pytest.fixture
def mirror(corpora):
    s = corpora / "scholarly"
    with RegistryMirror([s / "crossref-works"], [s / "openalex-works"], slow_seconds=1.0) as m:
        yield m


def _clients(m: RegistryMirror, retries: int = 2, timeout: float = 5.0):
    """Real clients of the mirror. The timeout is generous (a busy machine must not turn an
    answer into ``registry_unreachable``) except where a test wants the mirror's slow fault
    (``slow_seconds``) to time out."""
    kw = dict(timeout=timeout, max_retries=retries, backoff=0.01, backoff_max=0.05,
              per_second=200)
    cr = clients.CrossrefClient(RegistrySession(clients.CROSSREF_ORIGIN, m.crossref_url, **kw),
                                timeout=timeout)
    oa = clients.OpenAlexClient(RegistrySession(clients.OPENALEX_ORIGIN, m.openalex_url, **kw))
    return cr, oa


def check(m: RegistryMirror, cited: compare.Cited, doi: str | None) -> compare.Verdict:
    cr, oa = _clients(m)
    if doi is None:
        text = cited.title or ""
        fetches = cr.search(text), oa.search(text)
    else:
        fetches = cr.work(doi), oa.work(doi)
    return compare.decide(cited, doi, *(clients.parse_lookup(f) for f in fetches), TH)


def _cited_from_crossref(corpora: Path, name: str) -> compare.Cited:
    body = json.loads((corpora / "scholarly" / "crossref-works" / name).read_text())
    msg = body["message"]
    authors = tuple(f"{a.get('given', '')} {a['family']}".strip() for a in msg["author"])
    return compare.Cited(msg["title"][0], authors, msg["issued"]["date-parts"][0][0],
                         msg["container-title"][0])


@pytest.fixture
def elife(corpora) -> compare.Cited:
    return _cited_from_crossref(corpora, "10.7554_elife.01567.json")


def test_real_record_is_consistent_in_both_registries(mirror, elife):
    v = check(mirror, elife, ELIFE)
    assert v.verdict == "consistent", v.explanation
    assert (v.crossref_verdict, v.openalex_verdict, v.registries_agree) == \
        ("consistent", "consistent", True)
    assert v.fields_compared == "title,first_author,year,venue"
    assert v.title_similarity == 100.0 and v.retracted is False
    fields = json.loads(v.row()["explanation"])["crossref"]["fields"]
    assert fields["first_author"]["registry"] == "Martial Sankar"


@pytest.mark.parametrize(("perturb", "want"), [
    (lambda c: c.__class__(c.title.replace("vascular", "neuronal").replace("hypocotyl", "root"),
                           c.authors, c.year, c.venue), "title"),
    (lambda c: c.__class__(c.title, (c.authors[1], c.authors[0]) + c.authors[2:], c.year,
                           c.venue), "first_author"),
    (lambda c: c.__class__(c.title, c.authors, c.year + 3, c.venue), "year"),
])
def test_perturbed_real_record_is_a_mismatch_of_that_field(mirror, elife, perturb, want):
    v = check(mirror, perturb(elife), ELIFE)
    assert v.verdict == "mismatch", v.explanation
    assert v.mismatch_fields == want
    assert v.crossref_verdict == v.openalex_verdict == "mismatch"


def test_year_off_by_one_is_tolerated_for_online_first(mirror, elife):
    v = check(mirror, compare.Cited(elife.title, elife.authors, elife.year + 1, elife.venue),
              ELIFE)
    assert v.verdict == "consistent" and v.year_delta == 1


def test_doi_of_another_paper_mismatches_every_field(mirror, elife):
    v = check(mirror, elife, VQF)
    assert v.verdict == "mismatch"
    assert v.mismatch_fields == "title,first_author,year,venue"
    assert v.title_similarity < 50


def test_dropped_subtitle_is_not_a_mismatch_but_a_wrong_one_is(mirror, corpora):
    cited = _cited_from_crossref(corpora, "10.1371_journal.pone.0020476.json")
    main = cited.title.split(":")[0]
    ok = check(mirror, compare.Cited(main, cited.authors, cited.year, cited.venue),
               "10.1371/journal.pone.0020476")
    assert ok.verdict == "consistent"
    bad = check(mirror, compare.Cited(main + ": a follow-up study", cited.authors, cited.year,
                                      cited.venue), "10.1371/journal.pone.0020476")
    assert (bad.verdict, bad.mismatch_fields) == ("mismatch", "title")


def test_unknown_doi_is_not_found_in_both_with_crossrefs_real_404_body(mirror, corpora):
    # the habanero cassette recorded api.crossref.org's answer for this DOI: 404 text/plain
    cassette = (corpora / "scholarly" / "cassettes-habanero" / "test-works" /
                "test_works_bad_id_warn.yaml").read_text()
    assert "10.1371/notarealdoi" in cassette and "code: 404" in cassette
    assert NOT_FOUND_CROSSREF.decode() in cassette
    v = check(mirror, compare.Cited("Some title", ("A Person",), 2011, "PLoS ONE"),
              "10.1371/notarealdoi")
    assert (v.verdict, v.reason) == ("not_found", "doi_404_in_both_registries")
    assert v.registries_agree is True and v.mismatch_fields is None


def test_sici_doi_found_in_openalex_only(mirror):
    sici = "10.1890/0012-9658(2006)87[2832:tiopma]2.0.co;2"
    cited = compare.Cited("The impact of parasite manipulation and predator foraging behavior "
                          "on predator-prey communities", ("Andy Fenton",), 2006, "Ecology")
    v = check(mirror, cited, sici)
    assert (v.crossref_verdict, v.openalex_verdict) == ("not_found", "consistent")
    assert v.verdict == "consistent" and v.registries_agree is False


@pytest.mark.parametrize("fault", ["429", "500", "timeout", "invalid_json"])
def test_outage_is_unresolvable_after_bounded_retries(mirror, elife, fault):
    mirror.faults = {"crossref": fault, "openalex": fault}
    cr, oa = _clients(mirror, retries=2, timeout=0.4)
    fetches = cr.work(ELIFE), oa.work(ELIFE)
    v = compare.decide(elife, ELIFE, *(clients.parse_lookup(f) for f in fetches), TH)
    assert v.verdict == "unresolved", v.explanation
    assert v.mismatch_fields is None and v.retracted is None and v.registries_agree is None
    retried = fault in ("429", "500", "timeout")
    # one logical request per registry; 1 + 2 retries on the wire when the fault is retryable
    assert mirror.hits == ({"crossref": 3, "openalex": 3} if retried
                           else {"crossref": 1, "openalex": 1})
    assert cr.session.stats.requests == oa.session.stats.requests == 1
    want = {"429": "http_429", "500": "http_500", "timeout": "timeout"}.get(fault)
    if want:
        assert fetches[0].detail == want and fetches[1].detail == want
    else:
        assert fetches[0].outcome == fetches[1].outcome == "invalid"


def test_outage_in_one_registry_and_404_in_the_other_is_not_a_fabrication(mirror):
    mirror.faults = {"crossref": "500"}
    v = check(mirror, compare.Cited("x", ("A B",), 2020, None), "10.1371/notarealdoi")
    assert v.verdict == "unresolved" and v.openalex_verdict == "not_found"
    assert (v.reason, v.detail) == ("registry_unreachable",
                                    "crossref=unresolved,openalex=not_found")


def test_strong_search_candidate_is_checked_and_kept(mirror, corpora):
    cited = compare.Cited("Vector Quotient Filters", ("Prashant Pandey",), 2021, None)
    v = check(mirror, cited, None)
    assert v.verdict == "consistent" and v.candidate_doi == VQF


def test_weak_search_candidates_are_unmatched_not_not_found(mirror):
    # a ChatGPT-fabricated reference of the hallmark set (Walters & Wilder 2023)
    cited = compare.Cited("A computational approach to theme in the novel",
                          ("M. Jockers", "D. Witten"), 2010, "Literary and Linguistic Computing")
    v = check(mirror, cited, None)
    expl = v.explanation
    assert expl["openalex"]["candidates"] >= 1  # the registry did return something, weak
    assert v.verdict == "unmatched" and v.candidate_doi is None
    assert v.reason == "no_search_candidate_above_threshold"


def test_search_outage_is_unresolvable_not_unmatched(mirror):
    mirror.faults = {"openalex": "429"}
    v = check(mirror, compare.Cited("A computational approach to theme in the novel"), None)
    assert v.verdict == "unresolved"


def test_nothing_to_look_up_is_unresolvable(mirror):
    v = check(mirror, compare.Cited(), None)
    assert (v.verdict, v.reason) == ("unresolved", "nothing_to_look_up")


def test_recorded_correction_is_not_a_retraction(mirror, corpora):
    cited = _cited_from_crossref(corpora, "10.1371_journal.pone.0033693.json")
    v = check(mirror, cited, "10.1371/journal.pone.0033693")
    assert v.verdict == "consistent" and v.retracted is False
    assert "updated-by:correction" in v.explanation["crossref"]["notices"][0]


def test_retraction_sets_the_flag(corpora, tmp_path):
    """The corpus holds no retracted work, so the recorded correction notice of
    10.1371/journal.pone.0033693 is turned into a retraction (Crossref's ``updated-by`` shape
    is unchanged) and OpenAlex's ``is_retracted`` is set on a recorded work."""
    s = corpora / "scholarly"
    (tmp_path / "cr").mkdir()
    (tmp_path / "oa").mkdir()
    body = json.loads((s / "crossref-works" / "10.1371_journal.pone.0033693.json").read_text())
    body["message"]["updated-by"][0].update(type="retraction", label="Retraction")
    (tmp_path / "cr" / "w.json").write_text(json.dumps(body))
    oa = json.loads((s / "openalex-works" / "10.7554_elife.01567.json").read_text())
    oa["is_retracted"] = True
    (tmp_path / "oa" / "w.json").write_text(json.dumps(oa))
    with RegistryMirror([tmp_path / "cr"], [tmp_path / "oa"]) as m:
        v = check(m, _cited_from_crossref(corpora, "10.1371_journal.pone.0033693.json"),
                  "10.1371/journal.pone.0033693")
        assert v.verdict == "consistent" and v.retracted is True
        w = check(m, _cited_from_crossref(corpora, "10.7554_elife.01567.json"), ELIFE)
        assert w.retracted is True and w.crossref_verdict == "not_found"
    assert records.from_crossref(body).retracted


def test_base_url_mailto_and_timeout_reach_the_wire(mirror):
    session = RegistrySession(clients.CROSSREF_ORIGIN, mirror.crossref_url, mailto="ops@x.org",
                              per_second=200)
    clients.CrossrefClient(session).work(ELIFE)
    assert mirror.paths[-1] == f"/crossref/works/{ELIFE}?mailto=ops%40x.org"
    assert session.headers["User-Agent"].endswith("(mailto:ops@x.org)")
    assert session.rebase("https://api.crossref.org/works?x=1") == mirror.crossref_url + \
        "/works?x=1"


def test_rate_limit_spaces_requests(mirror):
    import time

    session = RegistrySession(clients.OPENALEX_ORIGIN, mirror.openalex_url, per_second=20)
    client = clients.OpenAlexClient(session)
    start = time.monotonic()
    for _ in range(5):
        client.work(ELIFE)
    assert time.monotonic() - start >= 4 / 20 * 0.9


def test_list_and_single_requests_have_their_own_limits():
    from citeaudit.scholarly.transport import is_list_request

    assert is_list_request("https://api.crossref.org/works?filter=doi:10.1/a&rows=2")
    assert is_list_request("http://127.0.0.1:9/openalex/works?search=x")
    assert not is_list_request(f"https://api.crossref.org/works/{ELIFE}")
    assert not is_list_request("https://api.openalex.org/works/doi:10.1/x")


def test_announced_rate_lowers_the_configured_rate_never_raises_it(mirror):
    session = RegistrySession(clients.CROSSREF_ORIGIN, mirror.crossref_url, per_second=200,
                              list_per_second=50)
    client = clients.CrossrefClient(session, timeout=1.0)
    mirror.announce["crossref"] = ("4", "1s")
    client.work(ELIFE)
    assert session.limiter.per_second == pytest.approx(4)
    assert session.list_limiter.per_second == pytest.approx(50)  # lists: not announced yet
    client.search("Parental care and the sex ratio")
    assert session.list_limiter.per_second == pytest.approx(4)
    mirror.announce["crossref"] = ("3000", "60s")  # 50/s: above 4 but below 200
    client.work(ELIFE)
    assert session.limiter.per_second == pytest.approx(50)
    mirror.announce["crossref"] = ("100000", "1s")  # never above what was configured
    client.work(ELIFE)
    assert session.limiter.per_second == pytest.approx(200)
    mirror.announce["crossref"] = ("many", "1s")  # unreadable: ignored
    client.work(ELIFE)
    assert session.limiter.per_second == pytest.approx(200)


def test_official_crossref_without_mailto_gets_the_public_pool(tmp_path):
    from citeaudit.scholarly.endpoints import OFFICIAL, RegistrySettings, open_clients

    anonymous = RegistrySettings("crossref", OFFICIAL)
    polite = RegistrySettings("crossref", OFFICIAL, mailto="ops@example.org")
    with open_clients(tmp_path, anonymous, RegistrySettings("openalex", "offline")) as oc:
        session = oc.clients["crossref"].session
        assert (session.limiter.per_second, session.list_limiter.per_second,
                oc.clients["crossref"].concurrency) == (5.0, 1.0, 1)
    with open_clients(tmp_path, polite) as oc:
        session = oc.clients["crossref"].session
        assert (session.limiter.per_second, session.list_limiter.per_second,
                oc.clients["crossref"].concurrency) == (10.0, 3.0, 2)
