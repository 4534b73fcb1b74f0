"""Done-when of the archive lookup: Liu et al. 2023 answers imported with `citeaudit import`, a
real pywb on loopback holding some of their cited URLs near the answers' time, one real
`citeaudit run`: those citations leave `unknown` for real L1 states (pass, dead), the others
stay `unknown` (no capture in the window), never pass. Then `citeaudit replay` serves the
project's WARCs and the replay link of an aligned capture opens with the archived bytes."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from io import BytesIO
from pathlib import Path

import duckdb
import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from citeaudit import cli
from citeaudit.archive.lookup import PywbMissing, PywbServer, build_collection, free_port

DAY = "2023-03-01"
REF = dt.datetime(2023, 3, 1, tzinfo=dt.UTC)


def cited_urls(raw: Path) -> list[str]:
    """Distinct cited URLs of the imported answers, in a stable order."""
    urls = set()
    for f in sorted((raw / "answers" / DAY).glob("*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            for claim in json.loads(line)["claims"]:
                urls.update(c["url"] for c in claim.get("citations", [])
                            if c["url"].startswith(("http://", "https://")))
    return sorted(urls)


def archive_warc(path: Path, held: list[tuple[str, float, int]]) -> Path:
    """A WARC of (url, days from the answers' time, status) captures."""
    with path.open("wb") as fh:
        w = WARCWriter(fh, gzip=True, warc_version="WARC/1.1")
        for url, days, status in held:
            body = f"<html><body><p>{url} as archived</p></body></html>".encode()
            http = StatusAndHeaders(f"{status} {'OK' if status == 200 else 'Not Found'}", [
                ("Content-Type", "text/html; charset=utf-8"),
                ("Content-Length", str(len(body)))], protocol="HTTP/1.1")
            date = (REF + dt.timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")
            w.write_record(w.create_warc_record(url, "response", payload=BytesIO(body),
                                                http_headers=http,
                                                warc_headers_dict={"WARC-Date": date}))
    return path


@pytest.fixture(scope="module")
def liu_run(corpora: Path, tmp_path_factory: pytest.TempPathFactory):
    liu = corpora / "annotations" / "liu-verifiability" / "intrinsic_halls.json"
    if not liu.is_file():
        pytest.skip(f"{liu} is absent")
    raw = tmp_path_factory.mktemp("liu-raw")
    assert cli.main(["import", "liu", str(liu), "--out", str(raw)]) == 0
    urls = cited_urls(raw)
    held = [(u, -2, 200) for u in urls[:8]] + [(u, -1, 404) for u in urls[8:10]] + \
        [(u, -40, 200) for u in urls[10:12]]  # the last two: long before the window
    root = tmp_path_factory.mktemp("liu-pywb")
    try:
        build_collection(root, "liu", [archive_warc(root / "liu-archive.warc.gz", held)])
    except PywbMissing as exc:
        pytest.skip(str(exc))
    derived = tmp_path_factory.mktemp("liu-derived")
    replay_port = free_port()
    with PywbServer(root) as server:
        (raw / "citeaudit.yaml").write_text(
            "fetch:\n  contact: ops@example.org\n  per_host_delay_seconds: 0\n"
            "  allow_private_networks: true\n"
            "  reference_window_hours: 168\n"
            f"archives:\n  - name: local\n    api: pywb\n    url: {server.base_url}/liu\n"
            f"replay:\n  base_url: http://127.0.0.1:{replay_port}\n  collection: audit\n",
            encoding="utf-8")
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("DAGSTER_HOME", str(tmp_path_factory.mktemp("liu-home")))
            mp.setenv("CITEAUDIT_CROSSREF_URL", "offline")
            mp.setenv("CITEAUDIT_OPENALEX_URL", "offline")
            assert cli.main(["run", "--raw", str(raw), "--derived", str(derived), "--date", DAY,
                             "--quiet"]) == 0
    return raw, derived, urls, replay_port


def sql(derived: Path, text: str) -> list[tuple]:
    con = duckdb.connect(str(derived / "catalog.duckdb"), read_only=True)
    try:
        return con.sql(text).fetchall()
    finally:
        con.close()


def test_archived_citations_get_real_l1_states(liu_run) -> None:
    _raw, derived, urls, _port = liu_run
    rows = sql(derived, """
        SELECT c.url, e.verdict, e.reason FROM citation_existence AS e
        JOIN citations AS c USING (citation_id)""")
    state = {}
    for url, st, reason in rows:
        state.setdefault(url, set()).add((st, reason))
    for u in urls[:8]:
        assert state[u] == {("pass", "ok")}, u
    for u in urls[8:10]:
        assert state[u] == {("dead", "http_404")}, u
    for u in urls[10:]:
        assert state[u] == {("unresolved", "no_capture_in_window")}, u
    counts = Counter(st for _u, st, _r in rows)
    held = sum(1 for u, _s, _r in rows if u in set(urls[:10]))
    assert counts["pass"] + counts["dead"] == held and counts["unresolved"] == len(rows) - held
    print("L1 states with a loopback archive:", dict(sorted(counts.items())))


def test_captures_and_log_say_where_they_came_from(liu_run) -> None:
    _raw, derived, urls, _port = liu_run
    origins = dict(sql(derived, "SELECT origin, count(*) FROM captures "
                                "WHERE record_type = 'response' GROUP BY ALL"))
    assert origins == {"archive:local": 10}
    outcomes = Counter(dict(sql(derived, """
        SELECT outcome, count(*) FROM fetch_log WHERE purpose = 'archive:local' GROUP BY ALL""")))
    assert outcomes["archive_fetched"] == 10
    assert outcomes["archive_no_capture"] == len(urls) - 10


def open_url(url: str, deadline: float, proc: subprocess.Popen) -> tuple[int, bytes]:
    while True:
        assert proc.poll() is None, f"citeaudit replay exited: {proc.stderr.read()}"
        try:
            with urllib.request.urlopen(url, timeout=10) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


def test_replay_link_of_an_aligned_capture_opens(liu_run) -> None:
    raw, derived, urls, port = liu_run
    links = dict(sql(derived, """
        SELECT c.url, e.replay_url FROM citation_existence AS e
        JOIN citations AS c USING (citation_id) WHERE e.verdict IN ('pass', 'dead')"""))
    assert set(links) == set(urls[:10])
    url = urls[0]
    ts = (REF - dt.timedelta(days=2)).strftime("%Y%m%d%H%M%S")
    assert links[url] == f"http://127.0.0.1:{port}/audit/{ts}/{url}"
    assert sql(derived, "SELECT count(*) FROM citation_existence WHERE verdict = 'unresolved' "
                        "AND replay_url IS NOT NULL") == [(0,)]
    report = next(derived.glob("report/observation_date=*/codebook=*/index.html")).read_text()
    assert 'class="replay" href="http://127.0.0.1:' in report
    exe = Path(sys.executable).parent / "citeaudit"
    proc = subprocess.Popen([str(exe), "replay", "--raw", str(raw), "--derived", str(derived)],
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 90
        status, _body = open_url(links[url], deadline, proc)
        assert status == 200
        raw_link = links[url].replace(f"/{ts}/", f"/{ts}id_/")
        status, body = open_url(raw_link, deadline, proc)
        assert (status, body) == (200, f"<html><body><p>{url} as archived</p></body></html>"
                                  .encode())
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert proc.returncode == 0, proc.stderr.read()
    assert (derived / "replay" / "collections" / "audit" / "archive").is_dir()
