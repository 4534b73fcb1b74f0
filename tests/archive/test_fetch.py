"""The live crawl against a real loopback HTTP server: politeness, robots, retries, redirects,
size limits, faults, WARC validity, idempotent reruns. Every request goes to 127.0.0.1."""

from __future__ import annotations

import datetime as dt
import gzip
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
from warcio.archiveiterator import ArchiveIterator

from citeaudit.archive.capture import CrawlResult, archive_date, http_get, read_logs
from citeaudit.archive.capture.scope import Scope
from citeaudit.archive.index import index_paths, to_cdxj_lines
from citeaudit.config import FetchSettings
from tests.archive.fetch_site import BIG, FetchSite

# reference times are "now", as in the nightly audit: captures carry the wall-clock time
T0 = dt.datetime.now(dt.UTC).replace(microsecond=0)
DAY = T0.date().isoformat()
TS = pa.timestamp("us", tz="UTC")


def tables(urls: list[str]) -> tuple[pa.Table, pa.Table]:
    cit = pa.table({"answer_id": ["a"] * len(urls), "url": urls,
                    "retrieved_at": pa.array([T0] * len(urls), TS)})
    ans = pa.table({"answer_id": ["a"], "observed_at": pa.array([T0], TS)})
    return cit, ans


def settings(site: FetchSite, **kw) -> FetchSettings:
    # the loopback test site is a private address: the tests opt in explicitly
    # (the soft-404 probe is tested in test_soft404_probe.py and in the delay test here)
    base = dict(enabled=True, via=site.origin, contact="ops@example.org",
                allow_private_networks=True, soft_404_probe=False,
                per_host_delay_seconds=0.0, read_timeout_seconds=2.0,
                total_timeout_seconds=3.0, max_retry_after_seconds=5.0,
                retry_backoff_seconds=0.05, max_body_bytes=100_000)
    return FetchSettings(**(base | kw))


def run(tmp_path: Path, site: FetchSite, urls: list[str], **kw) -> CrawlResult:
    cit, ans = tables(urls)
    return archive_date(tmp_path, DAY, cit, ans, settings(site, **kw), now=T0)


def outcomes(result: CrawlResult, url: str) -> list[str]:
    return [r["outcome"] for r in result.log.to_pylist() if r["url"] == url]


def records(raw: Path) -> list[tuple[str, object]]:
    out = []
    for f in sorted(raw.rglob("*.warc.gz")):
        with open(f, "rb") as fh:
            for rec in ArchiveIterator(fh):
                out.append((rec.rec_type, rec.rec_headers, rec.content_stream().read()))
    return out


def test_robots_disallowed_path_is_never_requested(tmp_path):
    with FetchSite() as site:
        res = run(tmp_path, site, ["http://a.test/private/x", "http://a.test/page1"])
    assert "/private/x" not in site.log.paths()
    assert site.log.paths("a.test").count("/robots.txt") == 1  # cached per host per run
    assert outcomes(res, "http://a.test/private/x") == ["robots_disallowed"]
    assert outcomes(res, "http://a.test/page1") == ["fetched"]
    assert outcomes(res, "http://a.test/robots.txt") == ["fetched"]


def test_robots_5xx_disallows_and_4xx_allows(tmp_path):
    with FetchSite() as site:
        res = run(tmp_path, site, ["http://robots5xx.test/page1", "http://norobots.test/page1"])
    assert outcomes(res, "http://robots5xx.test/page1") == ["robots_disallowed"]
    assert "/page1" not in site.log.paths("robots5xx.test")
    assert outcomes(res, "http://norobots.test/page1") == ["fetched"]


def test_per_host_delay_holds_on_the_server_side(tmp_path):
    urls = [f"http://d.test/page{i}" for i in range(4)] + \
        [f"http://e.test/page{i}" for i in range(4)]
    with FetchSite() as site:
        run(tmp_path, site, urls, per_host_delay_seconds=0.4, concurrency=4,
            soft_404_probe=True)
    for host in ("d.test", "e.test"):
        times = [t for h, _, t in site.log.requests if h == host]
        assert len(times) == 6  # robots + 4 pages + the soft-404 probe, all at the delay
        # The crawler spaces its request starts; an arrival can only be later than its start (a
        # busy machine delays one now and then, shortening the gap after it): the six arrivals
        # span five delays but for the first one's lateness, and no gap is far below the delay.
        assert times[-1] - times[0] >= 5 * 0.4 - 0.02, times
        gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
        assert min(gaps) >= 0.3, gaps
    # the two hosts were crawled side by side, not one after the other
    d_times = [t for h, _, t in site.log.requests if h == "d.test"]
    e_times = [t for h, _, t in site.log.requests if h == "e.test"]
    assert max(d_times) > min(e_times) and max(e_times) > min(d_times)


def test_retry_after_is_honoured_and_retries_are_bounded(tmp_path):
    with FetchSite() as site:
        res = run(tmp_path, site, ["http://r.test/busy", "http://r.test/always-busy"],
                  max_retries=2)
    times = [t for h, p, t in site.log.requests if p == "/busy"]
    assert len(times) == 2 and times[1] - times[0] >= 0.95
    assert outcomes(res, "http://r.test/busy") == ["retry_scheduled", "fetched"]
    assert outcomes(res, "http://r.test/always-busy") == [
        "retry_scheduled", "retry_scheduled", "gave_up_after_retries"]
    assert site.log.paths("r.test").count("/always-busy") == 3


def test_each_redirect_hop_is_its_own_record_and_loops_stop(tmp_path):
    with FetchSite() as site:
        res = run(tmp_path, site, ["http://h.test/hop0", "http://h.test/loop-a"])
    rows = [r for r in res.log.to_pylist() if r["cited_url"] == "http://h.test/hop0"]
    assert [(r["url"], r["hop"], r["http_status"]) for r in rows] == [
        ("http://h.test/hop0", 0, 301), ("http://h.test/hop1", 1, 301),
        ("http://h.test/hop2", 2, 200)]
    assert all(r["warc_file"] and r["warc_offset"] is not None for r in rows)
    uris = [h.get_header("WARC-Target-URI") for t, h, _ in records(tmp_path) if t == "response"]
    for u in ("http://h.test/hop0", "http://h.test/hop1", "http://h.test/hop2"):
        assert u in uris
    loop = [r["outcome"] for r in res.log.to_pylist() if r["cited_url"] == "http://h.test/loop-a"]
    assert loop == ["fetched", "fetched", "redirect_loop"]


def test_too_many_redirects(tmp_path):
    with FetchSite() as site:
        res = run(tmp_path, site, ["http://h.test/hop0"], max_redirects=1)
    assert [r["outcome"] for r in res.log.to_pylist() if r["purpose"] != "robots"] == [
        "fetched", "fetched", "too_many_redirects"]


def test_oversize_body_is_truncated_and_marked(tmp_path):
    with FetchSite() as site:
        res = run(tmp_path, site, ["http://b.test/big"], max_body_bytes=50_000)
    assert outcomes(res, "http://b.test/big") == ["too_large"]
    [(headers, body)] = [(h, b) for t, h, b in records(tmp_path)
                         if t == "response" and h.get_header("WARC-Target-URI").endswith("/big")]
    assert headers.get_header("WARC-Truncated") == "length"
    assert len(body) == 50_000 < BIG
    table = index_paths([(f, f.name) for f in tmp_path.rglob("*.warc.gz")], workers=1)
    big = [r for r in table.to_pylist() if (r["target_uri"] or "").endswith("/big")]
    assert big[0]["truncated"] is True
    with FetchSite() as site:  # a rerun does not fetch the oversize page again
        again = run(tmp_path, site, ["http://b.test/big"], max_body_bytes=50_000)
    assert outcomes(again, "http://b.test/big") == ["skipped_recent_capture"]
    assert site.log.requests == []


def test_faults_are_outcomes_and_the_crawl_goes_on(tmp_path):
    urls = ["http://f.test/slow", "http://f.test/lie", "http://f.test/endless",
            "http://f.test/garbage", "http://nowhere.invalid/page1", "ftp://f.test/file",
            "mailto:someone@example.org", "http://f.test/page9"]
    with FetchSite(slow_seconds=3.0) as site:
        res = run(tmp_path, site, urls, read_timeout_seconds=1.0, total_timeout_seconds=2.0)
    assert outcomes(res, "http://f.test/slow") == ["timeout"]
    assert outcomes(res, "http://f.test/lie") == ["connection_error"]
    assert outcomes(res, "http://f.test/endless") == ["timeout"]
    assert outcomes(res, "http://f.test/garbage") == ["bad_response"]
    assert outcomes(res, "http://nowhere.invalid/page1") == ["dns_error"]
    assert outcomes(res, "ftp://f.test/file") == ["unsupported_url"]
    assert outcomes(res, "mailto:someone@example.org") == ["unsupported_url"]
    assert outcomes(res, "http://f.test/page9") == ["fetched"]
    assert "nowhere.invalid" not in {h for h, _, _ in site.log.requests}
    cited = {r["cited_url"] for r in res.log.to_pylist() if r["purpose"] != "robots"}
    assert len(cited) == len(urls)  # no cited URL without a row


def test_refused_connection_and_deny_list(tmp_path):
    from tests.archive.fetch_site import free_port

    port = free_port()
    att = http_get("http://c.test/", via=f"http://127.0.0.1:{port}", user_agent="t",
                   connect_timeout=1, read_timeout=1, total_timeout=1, max_body=10,
                   scope=Scope(allow_private_networks=True))
    assert att.outcome == "connection_error"
    with FetchSite() as site:
        res = run(tmp_path, site, ["http://blocked.test/page1", "http://ok.test/page1"],
                  deny_hosts=("blocked.test",))
    assert outcomes(res, "http://blocked.test/page1") == ["host_denied"]
    assert "blocked.test" not in {h for h, _, _ in site.log.requests}
    with FetchSite() as site:
        res = run(tmp_path / "b", site, ["http://x.test/page1", "http://ok.test/page1"],
                  allow_hosts=("ok.test",))
    assert outcomes(res, "http://x.test/page1") == ["host_denied"]


def test_warc_records_linked_and_valid(tmp_path):
    with FetchSite() as site:
        run(tmp_path, site, ["http://w.test/page1?utm_source=x&q=1", "http://w.test/hop0"])
    recs = records(tmp_path)
    assert recs[0][0] == "warcinfo"
    info = recs[0][2].decode()
    assert "citeaudit/" in info and "ops@example.org" in info and "robots" in info
    responses = {h.get_header("WARC-Record-ID"): h for t, h, _ in recs if t == "response"}
    requests = [h for t, h, _ in recs if t == "request"]
    assert len(requests) == len(responses)
    for req in requests:
        resp = responses[req.get_header("WARC-Concurrent-To")]
        assert resp.get_header("WARC-Target-URI") == req.get_header("WARC-Target-URI")
        assert resp.get_header("WARC-IP-Address") == "127.0.0.1"
        assert resp.get_header("WARC-Payload-Digest").startswith("sha1:")
        assert resp.protocol == "WARC/1.1"
    # tracking parameters stripped, the original Host kept
    assert "http://w.test/page1?q=1" in {h.get_header("WARC-Target-URI")
                                        for h in responses.values()}
    assert "/page1?q=1" in site.log.paths("w.test")
    files = sorted(tmp_path.rglob("*.warc.gz"))
    check = subprocess.run([str(Path(sys.executable).with_name("warcio")), "check", "-v",
                            *map(str, files)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "digest pass" in check.stdout and "fail" not in check.stdout


def test_index_identical_to_cdxj_indexer(tmp_path):
    from tests.archive.test_warc_golden_pywb import run_cdxj_indexer

    with FetchSite() as site:
        run(tmp_path, site, ["http://i.test/page1", "http://i.test/hop0", "http://i.test/big"])
    for f in sorted(tmp_path.rglob("*.warc.gz")):
        ours = list(to_cdxj_lines(index_paths([(f, f.name)], workers=1)))
        assert ours == run_cdxj_indexer(f)
        assert len(ours) >= 4


def test_identical_payload_becomes_a_revisit_and_rerun_fetches_nothing(tmp_path):
    with FetchSite() as site:
        first = run(tmp_path, site, ["http://s.test/same", "http://s.test/page1"])
        assert outcomes(first, "http://s.test/same") == ["fetched"]
        later = T0 + dt.timedelta(days=10)  # past current_after_days: fetched as current state
        cit, ans = tables(["http://s.test/same"])
        second = archive_date(tmp_path, DAY, cit, ans, settings(site), now=later)
        assert [(r["purpose"], r["outcome"], r["record_type"]) for r in second.log.to_pylist()
                if r["purpose"] != "robots"] == [("current", "not_modified", "revisit")]
        before = len(site.log.requests)
        cit, ans = tables(["http://s.test/same", "http://s.test/page1"])
        third = archive_date(tmp_path, DAY, cit, ans, settings(site), now=T0)
        assert len(site.log.requests) == before  # nothing requested again
        assert set(third.log.column("outcome").to_pylist()) == {"skipped_recent_capture"}
    revisits = [h for t, h, _ in records(tmp_path) if t == "revisit"]
    assert len(revisits) == 1
    assert revisits[0].get_header("WARC-Profile").endswith("identical-payload-digest")
    assert revisits[0].get_header("WARC-Refers-To-Target-URI") == "http://s.test/same"
    assert len(list(read_logs(tmp_path, DAY).to_pylist())) >= 5


def test_files_roll_over_and_are_renamed_when_closed(tmp_path):
    urls = [f"http://o.test/page{i}" for i in range(12)]
    with FetchSite() as site:
        res = run(tmp_path, site, urls, warc_max_bytes=2048)
    names = sorted(p.name for p in (tmp_path / "warc").rglob("*") if p.is_file())
    assert len(res.files) >= 3 and all(n.endswith(".warc.gz") for n in names)
    assert names[0] == f"citeaudit-{DAY}-00001.warc.gz"
    for f in res.files:
        with gzip.open(f) as fh:
            assert fh.read(8) == b"WARC/1.1"


def test_tls_failure_is_an_outcome():
    """An https origin that does not speak TLS (our plain loopback server) fails the handshake."""
    with FetchSite() as site:
        att = http_get("https://t.test/page1", via=site.origin.replace("http:", "https:"),
                       user_agent="t", connect_timeout=2, read_timeout=2, total_timeout=3,
                       max_body=1000, scope=Scope(allow_private_networks=True))
    assert att.outcome == "tls_error" and att.exchange is None


def test_soft_404_probe_once_per_site_archived_and_named(tmp_path):
    """After a site's cited pages, one random never-existing path in the directory of a cited
    page is fetched (only for sites that answered 2xx), archived with a metadata record naming
    it a probe, logged with purpose probe."""
    urls = ["http://p.test/page1", "http://p.test/page2", "http://q.test/gone"]
    with FetchSite() as site:
        res = run(tmp_path, site, urls, soft_404_probe=True)
        paths = site.log.paths("p.test")
    probes = [r for r in res.log.to_pylist() if r["purpose"] == "probe"]
    assert len(probes) == 1  # q.test answered 410 only: nothing to compare, no probe
    probe = probes[0]
    assert probe["url"].startswith("http://p.test/") and probe["cited_url"] == probe["url"]
    assert (probe["outcome"], probe["http_status"]) == ("fetched", 404)
    assert paths == ["/robots.txt", "/page1", "/page2", probe["url"][len("http://p.test"):]]
    meta = [b for t, h, b in records(tmp_path)
            if t == "metadata" and h.get_header("WARC-Target-URI") == probe["url"]]
    assert len(meta) == 1 and b"citeaudit-probe: soft-404 probe" in meta[0]
    assert b"cited-example: http://p.test/page" in meta[0]
