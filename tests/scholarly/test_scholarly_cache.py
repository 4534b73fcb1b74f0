"""The registry cache: one request per new lookup, refresh by age, offline from the cache, and an
outage during a refresh that keeps the older answer. Real clients, loopback registry, parquet."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pytest

from citeaudit import parquet_io
from citeaudit.scholarly import cache, check, clients, compare
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


# ------------------------------------------------------------------ the project's memory
DOIS = ["10.7554/elife.01567", "10.1038/srep16696", "10.1017/9781108348843",
        "10.1145/3448016.3452841", "10.1371/notarealdoi"]


def _citations(dois: list[str]) -> pa.Table:
    """A date's citations table, one DOI citation per answer (the columns the L3 step reads)."""
    n = len(dois)
    return pa.table({
        "answer_id": [f"a{i}" for i in range(n)], "claim_id": [f"a{i}-c0" for i in range(n)],
        "citation_id": [f"a{i}-c0-0" for i in range(n)], "claim_index": [0] * n,
        "citation_index": [0] * n, "url": [f"https://doi.org/{d}" for d in dois],
        "doi": dois, "title": pa.nulls(n, pa.string()),
        "authors": pa.nulls(n, pa.list_(pa.string())), "year": pa.nulls(n, pa.int32()),
        "venue": pa.nulls(n, pa.string()), "source_type": ["scholarly"] * n,
    })


def _night(m, derived, date: str, dois: list[str], clock: datetime, refreshed=None):
    """One night's L3 step for ``date`` as the asset runs it: the cache read from disk, ages
    counted to the end of the observed day, the records written back as the date's partition."""
    store = cache.RecordStore(cache.read_cache(derived), _clients(m), refresh_days=30,
                              now=clock, as_of=cache.end_of_day(date),
                              refreshed_at=refreshed)
    checks = check.check_citations(_citations(dois), store, compare.Thresholds())
    parquet_io.write_partition(store.table(), derived, cache.ASSET,
                               {"observation_date": date, "codebook": "v1"})
    return store, checks


def _partition_bytes(derived, date: str) -> bytes:
    return (derived / cache.ASSET / f"observation_date={date}" / "codebook=v1" /
            parquet_io.DATA_FILE).read_bytes()


def test_the_second_night_asks_nothing_for_dois_answered_yesterday(mirror, tmp_path):
    night1 = datetime(2026, 11, 2, 2, tzinfo=UTC)
    first, checks1 = _night(mirror, tmp_path, "2026-11-01", DOIS[:4], night1)
    assert first.counts["requests"] > 0 and first.counts["from_cache"] == 0
    # fetched during the night after the observed day: no age
    assert checks1.column("answer_age_days").to_pylist() == [0, 0, 0, 0]
    hits = dict(mirror.hits)
    # the next night cites three of yesterday's four DOIs and a new one
    second, checks2 = _night(mirror, tmp_path, "2026-11-02", DOIS[1:], night1 + timedelta(1))
    asked = {k[2] for k, c in second.used.items() if c.fetched_at > night1 + timedelta(hours=12)}
    assert asked == {DOIS[4]}, "only the new DOI is asked"
    assert second.counts["from_cache"] == 6 and second.counts["lookups_fetched"] == 2
    # per registry a list of one and, as the DOI is not registered, its own check: 4 in all
    assert sum(mirror.hits.values()) - sum(hits.values()) == second.counts["requests"] == 4
    ages = dict(zip(checks2.column("doi").to_pylist(),
                    checks2.column("answer_age_days").to_pylist(), strict=True))
    assert ages == {DOIS[1]: 0, DOIS[2]: 0, DOIS[3]: 0, DOIS[4]: 0}
    # a week later the same answers are 6 days old at the end of that day (fetched 11-02 02:00)
    week, checks3 = _night(mirror, tmp_path, "2026-11-08", DOIS[:2], night1 + timedelta(7))
    assert week.counts["requests"] == 0
    assert checks3.column("answer_age_days").to_pylist() == [6, 6]
    assert checks3.column("verdict").to_pylist() == checks1.column("verdict").to_pylist()[:2]


def test_a_rerun_reads_what_its_first_run_read_whatever_later_nights_fetched(mirror, tmp_path):
    """Freshness and age are counted to the end of the observed day, not to the wall clock, and
    the oldest fresh record is read: a rerun months later writes the same bytes."""
    night1 = datetime(2026, 11, 2, 2, tzinfo=UTC)
    _, checks = _night(mirror, tmp_path, "2026-11-01", DOIS[:2], night1)
    before = _partition_bytes(tmp_path, "2026-11-01")
    # 40 days on, the answers are stale for that night: asked again, newer records on disk
    later, _ = _night(mirror, tmp_path, "2026-12-11", DOIS[:2], night1 + timedelta(40))
    assert later.counts["requests"] > 0 and later.counts["from_cache"] == 0
    # the rerun of the first date, 100 days after it: nothing asked, the same records
    rerun, again = _night(mirror, tmp_path, "2026-11-01", DOIS[:2], night1 + timedelta(100))
    assert rerun.counts["requests"] == 0
    assert _partition_bytes(tmp_path, "2026-11-01") == before
    assert again.equals(checks)
    # a backfill of an earlier date reads the oldest answer fetched after it
    back, old = _night(mirror, tmp_path, "2026-10-20", DOIS[:2], night1 + timedelta(101))
    assert back.counts["requests"] == 0 and old.column("answer_age_days").to_pylist() == [0, 0]
    assert {c.fetched_at for c in back.used.values()} == {
        c.fetched_at for c in rerun.used.values()}


def test_refresh_registries_asks_again_and_later_reruns_keep_the_new_answers(mirror, tmp_path):
    night1 = datetime(2026, 11, 2, 2, tzinfo=UTC)
    first, _ = _night(mirror, tmp_path, "2026-11-01", DOIS[:2], night1)
    cache.mark_refresh(tmp_path, night1 + timedelta(hours=5))
    floor = cache.refreshed_at(tmp_path)
    assert floor == night1 + timedelta(hours=5)
    forced, _ = _night(mirror, tmp_path, "2026-11-01", DOIS[:2], night1 + timedelta(hours=6),
                       refreshed=floor)
    assert forced.counts["from_cache"] == 0 and forced.counts["lookups_fetched"] == 4
    after = _partition_bytes(tmp_path, "2026-11-01")
    rerun, _ = _night(mirror, tmp_path, "2026-11-01", DOIS[:2], night1 + timedelta(days=2),
                      refreshed=floor)
    assert rerun.counts["requests"] == 0 and _partition_bytes(tmp_path, "2026-11-01") == after
    assert all(c.fetched_at > floor for c in rerun.used.values())


def test_a_refresh_file_that_does_not_parse_names_itself_and_the_fix(tmp_path):
    (tmp_path / ".citeaudit").mkdir()
    (tmp_path / cache.REFRESH_FILE).write_text('{"refreshed_at": "yesterday"}')
    with pytest.raises(ValueError, match=r"registry_refresh\.json: field refreshed_at .*"
                                         r"--refresh-registries"):
        cache.refreshed_at(tmp_path)
