"""The registry cache: one request per new lookup, refresh by age, offline from the cache, and an
outage during a refresh that keeps the older answer. Real clients, loopback registry, parquet."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from citeaudit import parquet_io
from citeaudit.scholarly import cache, clients
from citeaudit.scholarly.mirror import RegistryMirror
from citeaudit.scholarly.transport import RegistrySession

ELIFE = "10.7554/elife.01567"
PART = {"observation_date": "2026-11-01", "codebook": "v1"}


@pytest.fixture
def mirror(corpora):
    s = corpora / "scholarly"
    with RegistryMirror([s / "crossref-works"], [s / "openalex-works"]) as m:
        yield m


def _clients(m):
    kw = dict(timeout=0.5, max_retries=1, backoff=0.01, backoff_max=0.02, per_second=200)
    return {
        "crossref": clients.CrossrefClient(
            RegistrySession(clients.CROSSREF_ORIGIN, m.crossref_url, **kw)),
        "openalex": clients.OpenAlexClient(
            RegistrySession(clients.OPENALEX_ORIGIN, m.openalex_url, **kw)),
    }


def _run(m, derived, now, offline=False, part=PART):
    store = cache.RecordStore(cache.read_cache(derived), {} if offline else _clients(m),
                              refresh_days=30, now=now)
    for reg in ("crossref", "openalex"):
        store.get(reg, "work", ELIFE)
        store.get(reg, "work", "10.1371/notarealdoi")
    parquet_io.write_partition(store.table(), derived, cache.ASSET, part)
    return store


def test_cached_lookups_are_not_fetched_again_until_older_than_refresh_days(mirror, tmp_path):
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    first = _run(mirror, tmp_path, t0)
    assert first.counts["requests"] == 4 and mirror.hits == {"crossref": 2, "openalex": 2}
    second = _run(mirror, tmp_path, t0 + timedelta(days=29),
                  part={**PART, "codebook": "v2"})  # another partition reads the same cache
    assert second.counts["requests"] == 0 and second.counts["from_cache"] == 4
    assert mirror.hits == {"crossref": 2, "openalex": 2}
    third = _run(mirror, tmp_path, t0 + timedelta(days=31))
    assert third.counts["requests"] == 4
    table = parquet_io.read_partition(tmp_path, cache.ASSET, PART).to_pylist()
    # per record: when its answer arrived (the run's clock starts at its `now`)
    times = sorted(r["fetched_at"] for r in table)
    assert t0 + timedelta(days=31) < times[0] and times[-1] < t0 + timedelta(days=31, minutes=1)
    assert len(set(times)) == len(times)
    assert {(r["registry"], r["doi"], r["http_status"], r["outcome"]) for r in table} == {
        ("crossref", ELIFE, 200, "found"), ("openalex", ELIFE, 200, "found"),
        ("crossref", "10.1371/notarealdoi", 404, "not_found"),
        ("openalex", "10.1371/notarealdoi", 404, "not_found")}
    assert '"DOI": "10.7554/elife.01567"' in next(
        r["raw_json"] for r in table if r["registry"] == "crossref" and r["doi"] == ELIFE)


def test_offline_answers_from_the_cache_and_unknowns_stay_unresolved(mirror, tmp_path):
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    _run(mirror, tmp_path, t0)
    store = cache.RecordStore(cache.read_cache(tmp_path), {}, refresh_days=30,
                              now=t0 + timedelta(days=400))
    assert store.get("crossref", "work", ELIFE).outcome == "found"  # stale, but an answer
    unknown = store.get("crossref", "work", "10.1038/srep16696")
    assert (unknown.outcome, unknown.detail) == ("error", "offline_no_cached_record")
    assert store.counts["requests"] == 0


def test_outage_during_refresh_keeps_the_older_answer(mirror, tmp_path):
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    _run(mirror, tmp_path, t0)
    mirror.faults = {"crossref": "500", "openalex": "500"}
    later = _run(mirror, tmp_path, t0 + timedelta(days=60))
    assert later.counts["requests"] == 4 and later.counts["stale_used_after_error"] == 4
    rows = parquet_io.read_partition(tmp_path, cache.ASSET, PART).to_pylist()
    assert {r["outcome"] for r in rows} == {"found", "not_found"}
    # the older records, with the times their answers arrived in the first run
    assert all(t0 < r["fetched_at"] < t0 + timedelta(minutes=1) for r in rows)


def test_an_error_is_never_cached_as_an_answer(mirror, tmp_path):
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    mirror.faults = {"crossref": "429"}
    first = _run(mirror, tmp_path, t0)
    rows = {(r["registry"], r["doi"]): r for r in
            parquet_io.read_partition(tmp_path, cache.ASSET, PART).to_pylist()}
    assert rows[("crossref", ELIFE)]["outcome"] == "error"
    assert rows[("crossref", ELIFE)]["http_status"] == 429
    assert first.counts["requests"] == 4
    mirror.faults = {}
    again = _run(mirror, tmp_path, t0 + timedelta(hours=1))
    assert again.counts["requests"] == 2 and again.counts["from_cache"] == 2
