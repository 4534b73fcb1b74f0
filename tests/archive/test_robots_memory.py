"""robots.txt remembered across crawls: ``citeaudit archive`` twice against a loopback site
that counts its robots.txt requests. The second crawl asks none (the first's answers are kept
in RAW/robots/ and still obeyed); ``--refresh-robots`` or an age over
``fetch.robots_max_age_hours`` asks each host once again. Every request goes to 127.0.0.1."""

from __future__ import annotations

import datetime as dt
import json

import pyarrow.parquet as pq
import pytest

from citeaudit import cli, config
from citeaudit.archive.capture import robots_memory
from tests.archive.fetch_site import FetchSite
from tests.archive.test_fetch_pipeline import DAY, answer, make_raw

HOSTS = ("a.test", "b.test")
FETCH = {"contact": "ops@example.org", "allow_private_networks": True,
         "per_host_delay_seconds": 0.0, "soft_404_probe": False}


def cite(raw, pages: list[str]) -> None:
    """The day's answers cite ``pages`` on every host (new pages: the crawl has work to do)."""
    urls = [f"http://{h}/{p}" for h in HOSTS for p in pages]
    (raw / "answers" / DAY / "web.jsonl").write_text(json.dumps(answer("a1", urls)) + "\n")


def robots_asked(site: FetchSite) -> int:
    return sum(1 for _, p, _ in site.log.requests if p == "/robots.txt")


def last_log(raw) -> list[dict]:
    newest = sorted((raw / "fetch_logs" / DAY).glob("*.parquet"))[-1]
    return pq.read_table(newest).to_pylist()


def archive(raw, site: FetchSite, *extra: str) -> None:
    assert cli.main(["archive", "--raw", str(raw), "--date", DAY, "--via", site.origin,
                     *extra]) == 0


def test_a_second_crawl_reuses_robots_until_refreshed(tmp_path):
    with FetchSite() as site:
        raw = make_raw(tmp_path, [], FETCH)
        cite(raw, ["page1", "private/p1"])
        archive(raw, site)
        assert robots_asked(site) == 2                      # one per host
        kept = pq.read_table(next((raw / "robots").glob("*.parquet"))).to_pylist()
        assert sorted(r["url"] for r in kept) == [f"http://{h}/robots.txt" for h in HOSTS]
        assert all(r["http_status"] == 200 and b"Disallow: /private" in r["body"]
                   for r in kept)

        cite(raw, ["page2", "private/p2"])
        archive(raw, site)
        assert robots_asked(site) == 2                      # the second crawl asked none
        rows = last_log(raw)
        reused = [r for r in rows if r["purpose"] == "robots"]
        assert sorted(r["url"] for r in reused) == [f"http://{h}/robots.txt" for h in HOSTS]
        assert {r["outcome"] for r in reused} == {"robots_reused"}
        assert all(r["http_status"] == 200 and " h old; reused" in r["detail"]
                   for r in reused)
        # the remembered rules are obeyed: the private page is refused without a request
        assert "/private/p2" not in site.log.paths()
        assert {r["outcome"] for r in rows if r["url"].endswith("/private/p2")} == {
            "robots_disallowed"}
        assert {r["outcome"] for r in rows if r["url"].endswith("/page2")} == {"fetched"}

        cite(raw, ["page3"])
        archive(raw, site, "--refresh-robots")
        assert robots_asked(site) == 4                      # asked again, once per host
        assert {r["outcome"] for r in last_log(raw) if r["purpose"] == "robots"} == {
            "fetched"}
    # the refreshed answers are the newest: a later crawl reuses them (the refresh mark does
    # not make them stale)
    memory = robots_memory.RobotsMemory.load(raw, 24, dt.datetime.now(dt.UTC))
    assert all(memory.fresh(f"http://{h}/robots.txt") for h in HOSTS)
    assert robots_memory.RobotsMemory.load(raw, 0, dt.datetime.now(dt.UTC)).known == {}



def test_an_answer_older_than_the_limit_is_asked_again_and_outages_are_not_kept(tmp_path):
    with FetchSite() as site:
        raw = make_raw(tmp_path, [], FETCH)
        (raw / "answers" / DAY / "web.jsonl").write_text(json.dumps(answer("a1", [
            "http://a.test/page1", "http://robots5xx.test/page1",
            "http://norobots.test/page1"])) + "\n")
        archive(raw, site)
        kept = pq.read_table(next((raw / "robots").glob("*.parquet"))).to_pylist()
        # the 5xx answer (disallow all for now) is not kept; the 404 (allow all) is
        assert sorted((r["url"], r["http_status"]) for r in kept) == [
            ("http://a.test/robots.txt", 200), ("http://norobots.test/robots.txt", 404)]
    later = kept[0]["fetched_at"] + dt.timedelta(hours=25)
    memory = robots_memory.RobotsMemory.load(raw, 24, later)
    assert memory.fresh("http://a.test/robots.txt") is None          # 25 h old: too old
    memory = robots_memory.RobotsMemory.load(raw, 24, later - dt.timedelta(hours=2))
    assert memory.fresh("http://a.test/robots.txt") is not None      # 23 h old: reused
    assert memory.fresh("http://robots5xx.test/robots.txt") is None


def test_robots_max_age_over_24_hours_is_refused(tmp_path):
    path = tmp_path / config.CONFIG_FILE
    path.write_text("fetch:\n  robots_max_age_hours: 48\n")
    with pytest.raises(config.ConfigError, match="RFC 9309"):
        config.load(tmp_path)
