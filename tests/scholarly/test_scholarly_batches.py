"""DOI lookups in lists: Crossref ``filter=doi:a,doi:b`` and OpenAlex ``filter=doi:a|b``.

Real clients against the loopback registry serving recorded bodies (and the demo's registry).
The batched path must give every DOI the answer the one-by-one path gives: a DOI a list leaves
out is asked on its own (only ``/works/{doi}`` may say "not found"), an outage of a list request
is an error for each of its DOIs (never a negative finding), and the demo's verdicts are the
same to the row.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pytest

from citeaudit import parquet_io
from citeaudit.scholarly import check, clients, compare
from citeaudit.scholarly.cache import RecordStore
from citeaudit.scholarly.mirror import RegistryMirror
from citeaudit.scholarly.transport import RegistrySession

ELIFE = "10.7554/elife.01567"
UNKNOWN = ("10.1371/notarealdoi", "10.5555/never.registered")
T0 = datetime(2026, 11, 1, tzinfo=UTC)


@pytest.fixture
def mirror(corpora):
    s = corpora / "scholarly"
    with RegistryMirror([s / "crossref-works"], [s / "openalex-works"]) as m:
        yield m


def _clients(m: RegistryMirror) -> dict:
    kw = dict(timeout=1.0, max_retries=1, backoff=0.01, backoff_max=0.02, per_second=500)
    return {
        "crossref": clients.CrossrefClient(
            RegistrySession(clients.CROSSREF_ORIGIN, m.crossref_url, **kw), timeout=1.0),
        "openalex": clients.OpenAlexClient(
            RegistrySession(clients.OPENALEX_ORIGIN, m.openalex_url, **kw)),
    }


def _dois(m: RegistryMirror, registry: str) -> list[str]:
    return sorted(m.bodies[registry]) + list(UNKNOWN)


def _lookup(store: RecordStore, registry: str, dois: list[str]) -> dict[str, tuple]:
    store.prefetch(registry, dois)
    out = {}
    for doi in dois:
        f = store.get(registry, "work", doi)
        out[doi] = (f.http_status, f.outcome, clients.parse_lookup(f).works)
    return out


@pytest.mark.parametrize("registry", ["crossref", "openalex"])
def test_batched_lookups_give_each_doi_the_one_by_one_answer(mirror, registry):
    dois = _dois(mirror, registry)
    single = RecordStore({}, _clients(mirror), 30, now=T0, batched=False)
    want = _lookup(single, registry, dois)
    assert single.counts["requests"] == len(dois)
    mirror.paths.clear()
    batched = RecordStore({}, _clients(mirror), 30, now=T0)
    got = _lookup(batched, registry, dois)
    assert got == want
    assert {d: o for d, (_, o, _) in got.items() if o != "found"} == {
        d: "not_found" for d in UNKNOWN}
    # one list request for the recorded DOIs, then a /works/{doi} of its own per unknown DOI
    assert batched.counts["requests"] == 1 + len(UNKNOWN)
    assert batched.counts["batch_unanswered"] == len(UNKNOWN)
    singles = [p for p in mirror.paths if "/works/" in p.split("?")[0]]
    assert len(singles) == len(UNKNOWN)
    lists = [p for p in mirror.paths if p not in singles]
    assert len(lists) == 1 and ("filter=doi" in lists[0]) and all(
        ("rows=" if registry == "crossref" else "per-page=") in p for p in lists)


def test_a_doi_left_out_of_the_list_is_asked_on_its_own_and_found(mirror):
    mirror.batch_omits = {ELIFE}
    store = RecordStore({}, _clients(mirror), 30, now=T0)
    got = _lookup(store, "crossref", _dois(mirror, "crossref"))
    assert got[ELIFE][1] == "found" and got[ELIFE][2][0].doi == ELIFE
    assert any(p.startswith("/crossref/works/10.7554") for p in mirror.paths)
    assert store.used[("crossref", "work", ELIFE)].fetch.detail == ""  # its own answer


def test_lists_respect_the_batch_limit_and_each_list_has_one_fetch_time(mirror):
    cl = _clients(mirror)
    cl["openalex"].batch_limit = 4
    dois = sorted(mirror.bodies["openalex"])
    store = RecordStore({}, cl, 30, now=T0)
    _lookup(store, "openalex", dois)
    assert store.counts["requests"] == math.ceil(len(dois) / 4)
    times = [store.used[("openalex", "work", d)].fetched_at for d in dois]
    n = math.ceil(len(dois) / 4)
    assert len(set(times)) == n  # per list request, not per run
    assert min(times) > T0
    # list j holds every n-th DOI from the j-th on, and the lists go in that order
    lists = [[d for d, t in zip(dois, times, strict=True) if t == at]
             for at in sorted(set(times))]
    assert lists == [dois[j::n] for j in range(n)]


def test_checks_of_absent_dois_go_between_the_lists_one_request_at_a_time(mirror):
    """A DOI a list leaves out is checked as soon as that list has answered, while the other
    lists wait for their own limiter: neither kind waits for the other to finish, each keeps
    its rate, and one registry's DOI lookups still send one request at a time."""
    kw = dict(timeout=1.0, max_retries=1, backoff=0.01, backoff_max=0.02)
    session = RegistrySession(clients.CROSSREF_ORIGIN, mirror.crossref_url, per_second=100,
                              list_per_second=10, **kw)
    client = clients.CrossrefClient(session, timeout=1.0)
    client.batch_limit = 3
    fabricated = [f"10.5555/fabricated.{i}" for i in range(6)]
    dois = sorted(mirror.bodies["crossref"]) + fabricated  # the absent ones sort last
    store = RecordStore({}, {"crossref": client}, 30, now=T0)
    got = _lookup(store, "crossref", dois)
    assert all(got[d][1] == "not_found" for d in fabricated)
    lists = [at for at, path in mirror.log if "filter=" in path]
    singles = [at for at, path in mirror.log if "/works/10.5555" in path]
    assert len(lists) == math.ceil(len(dois) / 3) and len(singles) == len(fabricated)
    assert min(singles) < lists[1]  # the first list already named absent DOIs
    assert max(singles) < lists[-1]  # their checks did not wait for the last list
    # Each kind keeps its own spacing. The limiter spaces the starts; an arrival at the server
    # can only be later than its start (a busy machine delays one now and then), so the span
    # of n arrivals is at least n - 1 intervals but for the first one's delay, and no two come
    # in a burst.
    for times, interval in ((lists, 0.1), (singles, 0.01)):
        assert times[-1] - times[0] > (len(times) - 1) * interval - 0.02, (interval, times)
        assert min(b - a for a, b in zip(times, times[1:], strict=False)) > interval * 0.4
    assert mirror.max_in_flight["crossref"] == 1


def test_one_at_a_time_searches_go_between_the_single_checks(mirror):
    """With one request at a time (Crossref's public pool), the searches share the list
    limiter and fill its slots while the single checks go on, rather than after them."""
    kw = dict(timeout=1.0, max_retries=1, backoff=0.01, backoff_max=0.02)
    session = RegistrySession(clients.CROSSREF_ORIGIN, mirror.crossref_url, per_second=10,
                              list_per_second=20, **kw)
    client = clients.CrossrefClient(session, timeout=1.0)
    fabricated = [f"10.5555/fabricated.{i}" for i in range(10)]
    texts = ["genome sequencing", "cell biology", "protein folding", "neural networks"]
    store = RecordStore({}, {"crossref": client}, 30, now=T0)
    store.prefetch("crossref", sorted(mirror.bodies["crossref"]) + fabricated, texts)
    assert all(("crossref", "search", t) in store.used for t in texts)
    assert store.counts["requests"] == 1 + len(fabricated) + len(texts)
    searches = [at for at, path in mirror.log if "query.bibliographic" in path]
    singles = [at for at, path in mirror.log if "/works/10.5555" in path]
    assert min(searches) < max(singles)
    assert mirror.max_in_flight["crossref"] == 1


def test_each_record_is_announced_once_as_it_is_settled(mirror):
    store = RecordStore({}, _clients(mirror), 30, now=T0)
    dois = _dois(mirror, "openalex")
    _lookup(store, "openalex", dois)
    announced = []
    while not store.arrivals.empty():
        announced.append(store.arrivals.get())
    assert sorted(announced) == sorted(store.used) == sorted(("openalex", "work", d)
                                                             for d in dois)


@pytest.mark.parametrize("fault", ["500", "429"])
def test_an_outage_of_a_list_request_is_an_error_for_each_doi_not_a_not_found(mirror, fault):
    mirror.batch_faults = {"crossref": fault}
    store = RecordStore({}, _clients(mirror), 30, now=T0)
    got = _lookup(store, "crossref", _dois(mirror, "crossref"))
    assert {o for _, o, _ in got.values()} == {"error"}
    assert {s for s, _, _ in got.values()} == {int(fault)}
    assert store.counts["requests"] == 1  # no per-DOI storm against a failing service
    assert store.used[("crossref", "work", ELIFE)].fetch.detail == f"batch:http_{fault}"


def test_an_outage_of_a_list_request_during_a_refresh_keeps_the_older_answers(mirror):
    dois = _dois(mirror, "crossref")
    first = RecordStore({}, _clients(mirror), 30, now=T0)
    want = _lookup(first, "crossref", dois)
    mirror.batch_faults = {"crossref": "500"}
    later = RecordStore(dict(first.used), _clients(mirror), 30, now=T0 + timedelta(days=60))
    got = _lookup(later, "crossref", dois)
    assert got == want
    # one failed list held every DOI to refresh: no per-DOI retry against a failing service
    assert later.counts["requests"] == 1
    assert later.counts["stale_used_after_error"] == len(dois)


def test_an_invalid_list_body_falls_back_to_one_request_per_doi(mirror):
    mirror.batch_faults = {"openalex": "invalid_json"}
    dois = _dois(mirror, "openalex")
    store = RecordStore({}, _clients(mirror), 30, now=T0)
    got = _lookup(store, "openalex", dois)
    assert store.counts["requests"] == 1 + len(dois)
    assert got[ELIFE][1] == "found" and got[UNKNOWN[0]][1] == "not_found"


def test_a_stored_list_record_reads_like_the_single_work_body(mirror):
    store = RecordStore({}, _clients(mirror), 30, now=T0)
    store.prefetch("crossref", [ELIFE])
    stored = json.loads(store.used[("crossref", "work", ELIFE)].fetch.raw_json)
    single = json.loads(mirror.bodies["crossref"][ELIFE])
    assert stored["message"] == single["message"] and stored["message-type"] == "work"


def test_demo_verdicts_are_identical_batched_and_one_by_one(demo_run):
    citations = pa.concat_tables([
        parquet_io.read_partition(demo_run.derived, "citations", {"observation_date": d})
        for d in sorted(p.name.split("=", 1)[1]
                        for p in (demo_run.derived / "citations").glob("observation_date=*"))])
    results, made, hits = [], [], []
    with RegistryMirror.from_raw(demo_run.raw / "registry") as m:
        for batched, concurrency in ((False, 1), (True, 1), (True, 2)):
            kw = dict(timeout=2.0, max_retries=1, backoff=0.01, backoff_max=0.02,
                      per_second=500)
            cl = {"crossref": clients.CrossrefClient(
                      RegistrySession(clients.CROSSREF_ORIGIN, m.crossref_url, **kw)),
                  "openalex": clients.OpenAlexClient(
                      RegistrySession(clients.OPENALEX_ORIGIN, m.openalex_url, **kw))}
            for c in cl.values():
                c.concurrency = concurrency  # 2: DOI lookups and searches side by side
            before = sum(m.hits.values())
            store = RecordStore({}, cl, 30, batched=batched)
            results.append(check.check_citations(citations, store, compare.Thresholds()))
            made.append(store.counts)
            hits.append(sum(m.hits.values()) - before)
            dois = {k[2] for k in store.used if k[1] == "work"}
    # requests are counted exactly, also with two threads sharing a registry's session
    assert [c["requests"] for c in made] == hits
    assert results[2].equals(results[1]) and made[2] == made[1]
    one, many = results[:2]
    assert one.num_rows > 0 and one.equals(many)
    assert made[0]["lookups_fetched"] == made[1]["lookups_fetched"]
    # every DOI lookup of the one-by-one path became a place in a list; only the DOIs the
    # lists left out (not registered there) were asked again on their own
    lists = sum(math.ceil(len(dois) / c.batch_limit) for c in cl.values())
    assert made[1]["requests"] == (made[0]["requests"] - 2 * len(dois) + lists
                                   + made[1]["batch_unanswered"]), made
    assert made[1]["batch_unanswered"] < 2 * len(dois)
