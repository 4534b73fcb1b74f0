"""Archive lookup against a real pywb on loopback (wb-manager + wayback from .venv-pywb) and a
loopback stub of the Wayback Machine's CDX and availability APIs: the closest capture on both
sides of the reference time, an archived 404 kept as 404 though the replay answers 200, a URL
the archive lacks, an archive that is down. Every request goes to 127.0.0.1."""

from __future__ import annotations

import datetime as dt
import urllib.error
import urllib.request
from pathlib import Path

import pyarrow as pa
import pytest
from warcio.archiveiterator import ArchiveIterator

from citeaudit.archive.capture import CrawlResult, archive_date, fetched_files, file_origin
from citeaudit.archive.index import index_paths
from citeaudit.archive.lookup import (
    Candidate,
    PywbMissing,
    PywbServer,
    build_collection,
    choose,
    free_port,
    parse_index,
)
from citeaudit.config import ArchiveSettings, FetchSettings
from tests.archive.archive_fixtures import REF, WaybackStub, at, write_warc

DAY = "2023-03-02"
NOW = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)
TS = pa.timestamp("us", tz="UTC")
URLS = ["http://site.test/both", "http://site.test/after", "http://site.test/gone",
        "http://site.test/missing", "http://site.test/far", "http://site.test/old"]


@pytest.fixture(scope="module")
def pywb(tmp_path_factory: pytest.TempPathFactory):
    """A real pywb serving the fixture WARC (collection ``fixture``), started once."""
    root = tmp_path_factory.mktemp("pywb")
    try:
        build_collection(root, "fixture", [write_warc(root / "fixture.warc.gz")])
    except PywbMissing as exc:
        pytest.skip(str(exc))
    with PywbServer(root) as server:
        yield server


def settings(**kw) -> FetchSettings:
    # the archive under test listens on loopback: the tests opt in explicitly
    return FetchSettings(**({"contact": "ops@example.org", "per_host_delay_seconds": 0.0,
                             "allow_private_networks": True,
                             "read_timeout_seconds": 5.0, "total_timeout_seconds": 10.0,
                             "retry_backoff_seconds": 0.01, "max_retries": 1} | kw))


def run(raw: Path, archives: tuple[ArchiveSettings, ...], urls=URLS) -> CrawlResult:
    cit = pa.table({"answer_id": ["a"] * len(urls), "url": urls,
                    "retrieved_at": pa.array([REF] * len(urls), TS)})
    ans = pa.table({"answer_id": ["a"], "observed_at": pa.array([REF], TS)})
    return archive_date(raw, DAY, cit, ans, settings(), now=NOW, archives=archives,
                              live=False, sleep=lambda s: None)


def by_url(result: CrawlResult) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in result.log.to_pylist():
        out.setdefault(r["cited_url"], []).append(r)
    return out


def captured(raw: Path) -> dict[str, dict]:
    files = fetched_files(raw, DAY)
    rows = index_paths([(f, f.relative_to(raw).as_posix()) for f in files], workers=1)
    return {r["target_uri"]: r | {"origin": file_origin(r["file"])} for r in rows.to_pylist()}


def test_closest_capture_both_sides_404_missing_and_down(tmp_path: Path, pywb) -> None:
    down = ArchiveSettings("down", "pywb", f"http://127.0.0.1:{free_port()}/fixture")
    local = ArchiveSettings("local", "pywb", f"{pywb.base_url}/fixture")
    result = run(tmp_path, (down, local))
    log, caps = by_url(result), captured(tmp_path)

    # an archive that refuses connections is an error row, and the next archive is asked
    for url in URLS:
        first = [r for r in log[url] if r["purpose"] == "archive:down"]
        assert [r["outcome"] for r in first] == ["archive_error"]
        assert "connection_error" in first[0]["detail"]
        assert {r["purpose"] for r in log[url]} == {"archive:down", "archive:local"}
    # both sides in the window: the one at or before the reference time, though later is closer
    assert caps["http://site.test/both"]["capture_time"] == at(-6)
    assert caps["http://site.test/both"]["http_status"] == 200
    # only after in the window (the earlier capture is 30 h before): the one after
    assert caps["http://site.test/after"]["capture_time"] == at(3)
    # an archived 404 stays 404 (from the CDX status field)
    assert caps["http://site.test/gone"]["http_status"] == 404
    assert {c["origin"] for c in caps.values()} == {"archive:local"}
    # an archived redirect (status from the CDX) is followed in the archive: its target too
    assert (caps["http://site.test/old"]["http_status"],
            caps["http://site.test/old"]["redirect_location"]) == (301, "/new")
    assert caps["http://site.test/new"]["capture_time"] == at(-3)
    # a URL the archive lacks, and one captured only outside the window: no capture, no record
    for url in ("http://site.test/missing", "http://site.test/far"):
        mine = [r for r in log[url] if r["purpose"] == "archive:local"]
        assert [r["outcome"] for r in mine] == ["archive_no_capture"]
        assert url not in caps
    fetched = [r for r in result.log.to_pylist() if r["outcome"] == "archive_fetched"]
    assert len(fetched) == 5 and all(r["warc_file"] and r["purpose"] == "archive:local"
                                     for r in fetched)

    # the WARC: response (original URL, memento date, archived bytes) then metadata
    recs = []
    for f in fetched_files(tmp_path, DAY):
        assert f.name.endswith("-archive-local.warc.gz")
        with open(f, "rb") as fh:
            recs += [(r.rec_type, r.rec_headers, r.http_headers, r.content_stream().read())
                     for r in ArchiveIterator(fh)]
    gone = [r for r in recs if r[1].get_header("WARC-Target-URI") == "http://site.test/gone"]
    assert [r[0] for r in gone] == ["response", "metadata"]
    assert gone[0][1].get_header("WARC-Date") == "2023-03-02T11:00:00Z"
    assert gone[0][2].get_statuscode() == "404"
    assert gone[0][3] == b"<html><p>Not Found</p></html>"
    meta = gone[1][3].decode()
    assert "archive: local" in meta and "archive-status: 404" in meta
    assert f"memento-url: {pywb.base_url}/fixture/20230302110000id_/http://site.test/gone" in meta
    assert gone[1][1].get_header("WARC-Refers-To") == gone[0][1].get_header("WARC-Record-ID")

    # a rerun asks nothing for what it now holds, and does not ask the same question again
    # for what the archive said it lacks (within no_capture_cache_days)
    again = by_url(run(tmp_path, (local,)))
    assert set(again) == {"http://site.test/missing", "http://site.test/far"}
    assert {r["outcome"] for rows in again.values() for r in rows} == {
        "archive_no_capture_cached"}
    fresh = by_url(run(tmp_path, (ArchiveSettings("local", "pywb", f"{pywb.base_url}/fixture",
                                                  no_capture_cache_days=0),)))
    assert {r["outcome"] for rows in fresh.values() for r in rows} == {"archive_no_capture"}


def test_pywb_replays_an_archived_404_as_200(pywb) -> None:
    """Why the status comes from the index: pywb's framed replay answers 200 for a 404."""
    url = f"{pywb.base_url}/fixture/20230302110000/http://site.test/gone"
    with urllib.request.urlopen(url, timeout=10) as resp:
        assert resp.status == 200


def test_archive_down_leaves_the_page_unresolved(tmp_path: Path) -> None:
    down = ArchiveSettings("down", "pywb", f"http://127.0.0.1:{free_port()}/fixture")
    result = run(tmp_path, (down,), ["http://site.test/both"])
    assert [r["outcome"] for r in result.log.to_pylist()] == ["archive_error"]
    assert fetched_files(tmp_path, DAY) == []


@pytest.mark.parametrize("api", ["wayback", "wayback-availability"])
def test_wayback_machine_json_shapes(tmp_path: Path, api: str) -> None:
    with WaybackStub() as stub:
        result = run(tmp_path, (ArchiveSettings("ia", api, stub.url),))
        caps, log = captured(tmp_path), by_url(result)
    assert caps["http://site.test/gone"]["http_status"] == 404  # the stub's replay said 200
    assert caps["http://site.test/after"]["capture_time"] == at(3)
    assert log["http://site.test/missing"][-1]["outcome"] == "archive_no_capture"
    assert log["http://site.test/far"][-1]["outcome"] == "archive_no_capture"
    assert {c["origin"] for c in caps.values()} == {"archive:ia"}
    if api == "wayback":
        assert caps["http://site.test/both"]["capture_time"] == at(-6)
        assert any(p.startswith("/cdx/search/cdx?url=http%3A%2F%2Fsite.test%2Fboth&output=json")
                   for p in stub.requests)
    else:  # the availability API names one snapshot, the closest (here: after)
        assert caps["http://site.test/both"]["capture_time"] == at(2)
    assert all("id_/" in p for p in stub.requests if p.startswith("/web/"))


def test_parse_and_choose() -> None:
    with pytest.raises(ValueError, match="not JSON"):
        parse_index("pywb", b"<html>error</html>")
    assert parse_index("wayback", b"[]") == []
    rows = parse_index("pywb", b'{"timestamp": "20230302", "url": "http://x/", "status": "-"}\n'
                               b'{"timestamp": "20230301100000", "url": "http://x/", '
                               b'"status": "301"}\n')
    assert rows[0].status is None and rows[0].timestamp == "20230302000000"
    # a capture without a status is never chosen
    assert choose(rows, REF, dt.timedelta(hours=48)).status == 301
    near = [Candidate("20230302120000", "http://x/", 200),
            Candidate("20230302115959", "http://x/", 200)]
    assert choose(near, REF, dt.timedelta(hours=1)).timestamp == "20230302120000"
    assert choose(near, REF + dt.timedelta(hours=3), dt.timedelta(hours=1)) is None


def test_replay_of_an_unknown_url_is_not_a_capture(pywb) -> None:
    with pytest.raises(urllib.error.HTTPError):
        urllib.request.urlopen(f"{pywb.base_url}/fixture/20230302id_/http://site.test/missing",
                               timeout=10)


def test_an_archived_5xx_is_a_capture_and_an_archive_error_stays_one(tmp_path: Path) -> None:
    """The status comes from the index: a replay answering the 500/503 the index lists is the
    capture (raw replay of an archived error page); a replay answering 500 for a capture the
    index lists as 200 is the archive's own error: archive_error, nothing written."""
    holdings = [("http://site.test/e500", -1, 500, b"<html><p>server error then</p></html>"),
                ("http://site.test/e503", -1, 503, b"<html><p>unavailable then</p></html>"),
                ("http://site.test/broken", -1, 200, b"<html><p>fine then</p></html>")]
    replay = {"http://site.test/e500": 500, "http://site.test/e503": 503,
              "http://site.test/broken": 500}
    urls = [u for u, *_ in holdings]
    with WaybackStub(holdings, replay_status=replay) as stub:
        result = run(tmp_path, (ArchiveSettings("ia", "wayback", stub.url),), urls)
    caps, log = captured(tmp_path), by_url(result)
    assert caps["http://site.test/e500"]["http_status"] == 500
    assert caps["http://site.test/e503"]["http_status"] == 503
    assert [r["outcome"] for r in log["http://site.test/e503"]] == ["archive_fetched"]  # no retry
    assert [r["outcome"] for r in log["http://site.test/broken"]] == ["archive_error"]
    assert "replay answered HTTP 500" in log["http://site.test/broken"][0]["detail"]
    assert "http://site.test/broken" not in caps


def test_a_snapshot_url_outside_the_archive_obeys_the_crawl_scope(tmp_path: Path) -> None:
    """An availability answer naming a snapshot on another origin (here the cloud metadata
    address) is checked like a cited URL: refused, nothing sent; the archive's own origin is
    the operator's choice and is asked without the opt-in."""
    with WaybackStub(snapshot_base="http://169.254.169.254") as stub:
        cit = pa.table({"answer_id": ["a"], "url": ["http://site.test/both"],
                        "retrieved_at": pa.array([REF], TS)})
        ans = pa.table({"answer_id": ["a"], "observed_at": pa.array([REF], TS)})
        result = archive_date(tmp_path, DAY, cit, ans, settings(allow_private_networks=False),
                              now=NOW, archives=(ArchiveSettings("ia", "wayback-availability",
                                                                 stub.url),),
                              live=False, sleep=lambda s: None)
    rows = result.log.to_pylist()
    assert [r["outcome"] for r in rows] == ["archive_error"]
    assert "private_address" in rows[0]["detail"] and "169.254.169.254" in rows[0]["detail"]
    assert fetched_files(tmp_path, DAY) == []
