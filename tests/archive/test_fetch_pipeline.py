"""The crawl inside the pipeline and on the command line: ``citeaudit run`` with fetching enabled
archives the day's cited pages from a loopback site, and the citations then get their L1 state
through the normal alignment; ``citeaudit archive`` survives SIGKILL; the config fails clearly."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from warcio.archiveiterator import ArchiveIterator

from citeaudit import cli, config
from tests.archive.fetch_site import FetchSite

PROJECT = Path(__file__).resolve().parents[2]
NOW = dt.datetime.now(dt.UTC).replace(microsecond=0)
DAY = NOW.date().isoformat()


def answer(aid: str, urls: list[str]) -> dict:
    return {
        "answer_id": aid, "query_id": "q1", "query_text": "what is on the page?",
        "engine": "perplexity", "observed_at": NOW.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "answer_text": "The page says so.",
        "strata": {"domain": "news", "risk_band": "low", "inclusion_prob": 1},
        "claims": [{
            "claim_id": f"{aid}-k0", "span": [0, 17], "text": "The page says so.",
            "verification_worthy": True,
            "citations": [{"citation_id": f"{aid}-x{i}", "url": u} for i, u in enumerate(urls)],
        }],
    }


def make_raw(root: Path, urls: list[str], fetch: dict | None) -> Path:
    from citeaudit.demo_corpus.codebooks import write_codebooks

    raw = root / "raw"
    folder = raw / "answers" / DAY
    folder.mkdir(parents=True)
    (folder / "web.jsonl").write_text(json.dumps(answer("a1", urls)) + "\n", encoding="utf-8")
    write_codebooks(raw / "codebooks")
    if fetch is not None:
        import yaml

        (raw / config.CONFIG_FILE).write_text(yaml.safe_dump({"fetch": fetch}))
    return raw


def test_run_with_fetch_enabled_archives_live_and_aligns(tmp_path, monkeypatch):
    urls = ["http://live.test/page1", "http://live.test/gone", "http://live.test/private/p",
            "http://live.test/hop0", "http://soft.test/news/gone-story",
            "http://live.test/paywalled", "http://live.test/challenge", "http://soft.test/page2"]
    with FetchSite() as site:
        raw = make_raw(tmp_path, urls, {"enabled": True, "via": site.origin,
                                        "contact": "ops@example.org",
                                        "allow_private_networks": True,
                                        "per_host_delay_seconds": 0.0})
        home = tmp_path / "home"
        home.mkdir()
        shutil.copyfile(PROJECT / "tests" / "dagster.yaml", home / "dagster.yaml")
        monkeypatch.setenv("DAGSTER_HOME", str(home))
        derived = tmp_path / "derived"
        code = cli.main(["run", "--raw", str(raw), "--derived", str(derived), "--date", DAY,
                         "--codebook", "v1", "--quiet"])  # one codebook is all it reads
        assert code == 0
    assert "/private/p" not in site.log.paths()
    day = f"observation_date={DAY}"
    log = pq.read_table(derived / "fetch_log" / day / "data.parquet").to_pylist()
    by_url = {(r["url"], r["hop"]): r["outcome"] for r in log}
    assert by_url[("http://live.test/page1", 0)] == "fetched"
    assert by_url[("http://live.test/private/p", 0)] == "robots_disallowed"
    assert by_url[("http://live.test/hop2", 2)] == "fetched"
    caps = pq.read_table(derived / "captures" / f"crawl_date={DAY}" / "data.parquet")
    assert set(caps.column("origin").to_pylist()) == {"fetched"}
    books = sorted(p.name for p in (derived / "citation_existence").glob(f"{day}/codebook=*"))
    assert books
    l1 = pq.read_table(derived / "citation_existence" / day / books[0] / "data.parquet")
    states = {r["citation_id"]: (r["verdict"], r["reason"]) for r in l1.to_pylist()}
    assert states["a1-x0"][0] == "pass"          # archived live, aligned like any capture
    assert states["a1-x1"][0] == "dead"          # a 410 at citation time
    assert states["a1-x2"][0] == "unresolved"       # never fetched: robots said no
    assert states["a1-x3"][0] == "pass"          # followed through the recorded hops
    # a 200 "not found" page, shown to be one by the crawl's probe of its site: dead
    assert states["a1-x4"] == ("dead", "soft_404")
    evidence = {r["citation_id"]: r["soft_404_evidence"] for r in l1.to_pylist()}
    assert evidence["a1-x4"] == "probe_match"
    assert states["a1-x7"] == ("pass", "ok")     # a real page of the same soft-404 site
    # walls: unresolved, never pass or dead, and L2 has no text to call "not in page"
    assert states["a1-x5"] == ("unresolved", "paywall")
    assert states["a1-x6"] == ("unresolved", "bot_challenge")
    probes = [r for r in log if r["purpose"] == "probe"]
    assert {r["url"].split("/")[2] for r in probes} == {"live.test", "soft.test"}
    assert all(r["outcome"] == "fetched" for r in probes)
    ev = pq.read_table(derived / "support_evidence" / day / books[0] / "data.parquet")
    ev_states = {r["citation_id"]: (r["verdict"], r["reason"]) for r in ev.to_pylist()}
    assert ev_states["a1-x5"] == ("unresolved", "page_unavailable")
    # the soft-404's capture is a "not found" page: no evidence is looked for in it
    assert ev_states["a1-x4"] == ("unresolved", "soft_404")
    assert ev_states["a1-x7"][0] != "unresolved"


def test_run_never_fetches_by_default(tmp_path, monkeypatch):
    with FetchSite() as site:
        raw = make_raw(tmp_path, ["http://quiet.test/page1"], None)
        home = tmp_path / "home"
        home.mkdir()
        shutil.copyfile(PROJECT / "tests" / "dagster.yaml", home / "dagster.yaml")
        monkeypatch.setenv("DAGSTER_HOME", str(home))
        assert cli.main(["run", "--raw", str(raw), "--derived", str(tmp_path / "d"),
                         "--date", DAY, "--codebook", "v1", "--quiet"]) == 0
    assert site.log.requests == []
    assert not (raw / "warc").exists()


def _visible_warcs(raw: Path) -> list[Path]:
    return sorted(raw.rglob("*.warc.gz"))


def test_sigkill_mid_crawl_leaves_no_visible_partial_warc_and_rerun_completes(tmp_path):
    urls = [f"http://k{i}.test/page{j}" for i in range(2) for j in range(12)]
    with FetchSite() as site:
        raw = make_raw(tmp_path, urls, {"contact": "ops@example.org",
                                        "allow_private_networks": True,
                                        "per_host_delay_seconds": 0.25, "concurrency": 2})
        command = [str(Path(sys.executable).with_name("citeaudit")), "archive", "--raw",
                   str(raw), "--date", DAY, "--via", site.origin]
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while sum(1 for _, p, _ in site.log.requests if p.startswith("/page")) < 6:
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        assert _visible_warcs(raw) == []              # only the invisible .open file
        assert list(raw.rglob("*.open"))
        rerun = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert rerun.returncode == 0, rerun.stderr
    assert not list(raw.rglob("*.open"))              # the dead process's files were settled
    # what the killed crawl fetched was kept and not fetched again (at most the pages in
    # flight at the kill, one per worker, are asked twice)
    page_hits = [p for _, p, _ in site.log.requests if p.startswith("/page")]
    assert len(page_hits) <= len(urls) + 2, len(page_hits)
    logs = sorted((raw / "fetch_logs" / DAY).glob("*.parquet"))
    assert len(logs) == 2                             # the killed crawl's log, then the rerun's
    killed = pq.read_table(logs[0]).to_pylist()
    assert sum(r["outcome"] == "fetched" and r["purpose"] != "robots" for r in killed) >= 4
    rerun_log = pq.read_table(logs[1]).to_pylist()
    assert sum(r["outcome"] == "skipped_recent_capture" for r in rerun_log) >= 4
    fetched = set()
    for f in _visible_warcs(raw):
        with open(f, "rb") as fh:
            for rec in ArchiveIterator(fh):
                if rec.rec_type == "response":
                    fetched.add(rec.rec_headers.get_header("WARC-Target-URI"))
    assert set(urls) <= fetched
    assert "archive " + DAY in rerun.stderr and "fetched" in rerun.stderr


def test_archive_cli_needs_a_contact_and_reports_config_errors(tmp_path, capsys):
    raw = make_raw(tmp_path, ["http://x.test/"], None)
    assert cli.main(["archive", "--raw", str(raw), "--date", DAY,
                     "--via", "http://127.0.0.1:9"]) == 2
    assert "fetch.contact" in capsys.readouterr().err
    (raw / config.CONFIG_FILE).write_text("fetch:\n  per_host_delay_secs: 2\n")
    assert cli.main(["archive", "--raw", str(raw), "--date", DAY]) == 2
    err = capsys.readouterr().err
    assert "citeaudit.yaml: fetch.per_host_delay_secs: unknown key" in err


@pytest.mark.parametrize(("text", "message"), [
    ("fetch:\n  enabled: yes please\n", "fetch.enabled: expected true or false"),
    ("fetch:\n  concurrency: 0\n", "fetch.concurrency: must be at least 1"),
    ("fetch:\n  enabled: true\n", "fetch.contact: required when fetch.enabled"),
    ("fetch:\n  via: 127.0.0.1:80\n", "fetch.via: expected an http(s) origin"),
    ("fetch:\n  deny_hosts: example.org\n", "fetch.deny_hosts: expected a list"),
    ("crawler: {}\n", "crawler: unknown section"),
    ("- a list\n", "expected a mapping of sections"),
    ("fetch: [\n", "not valid YAML"),
])
def test_config_errors_name_file_and_key(tmp_path, text, message):
    (tmp_path / config.CONFIG_FILE).write_text(text)
    with pytest.raises(config.ConfigError) as exc:
        config.load(tmp_path)
    assert str(tmp_path / config.CONFIG_FILE) in str(exc.value)
    assert message in str(exc.value)


def test_config_defaults_and_values(tmp_path):
    assert config.load(tmp_path).fetch.enabled is False
    (tmp_path / config.CONFIG_FILE).write_text(
        "fetch:\n  enabled: true\n  contact: ops@example.org\n  deny_hosts: [Ads.Example]\n"
        "  per_host_delay_seconds: 0\n")
    f = config.load(tmp_path).fetch
    assert f.enabled and f.deny_hosts == ("ads.example",) and f.per_host_delay_seconds == 0.0
    assert "ops@example.org" in f.user_agent_string("1.0") and "citeaudit/1.0" in \
        f.user_agent_string("1.0")
