"""The demo archives its last date live from its own loopback site (as `make demo` does): the
planted site behaviours end as their expected outcomes, the fetched records are in the capture
index as `fetched`, and the earlier dates keep only their supplied WARCs."""

from __future__ import annotations

import pyarrow.parquet as pq


def _log(demo_run) -> list[dict]:
    date = demo_run.truth["fetch"]["date"]
    path = demo_run.derived / "fetch_log" / f"observation_date={date}" / "data.parquet"
    return pq.read_table(path).to_pylist()


def test_planted_site_behaviours_end_as_expected(demo_run):
    fetch = demo_run.truth["fetch"]
    assert set(fetch["planted"]) == {"robots", "slow", "busy", "oversize", "denied", "script"}
    log = _log(demo_run)
    for kind, url in fetch["planted"].items():
        final = [r["outcome"] for r in log if r["url"] == url and r["hop"] == 0
                 and r["purpose"] != "robots" and r["outcome"] != "retry_scheduled"]
        expected = fetch["expected_outcomes"][kind]
        if kind == "busy":  # 429 first, then the page: unchanged, so written as a revisit
            assert final in (["fetched"], ["not_modified"])
            assert any(r["outcome"] == "retry_scheduled" for r in log if r["url"] == url)
        elif kind == "script":  # the shell, unchanged since the supplied capture, then its
            # render: rendered where a browser is installed, browser_unavailable elsewhere
            assert [r["outcome"] for r in log if r["url"] == url
                    and r["purpose"] != "render"] == ["not_modified"]
            renders = [r for r in log if r["url"] == url and r["purpose"] == "render"]
            assert [r["outcome"] for r in renders] == [expected]
            assert expected in ("rendered", "browser_unavailable")
            subs = {r["url"] for r in log if r["purpose"] == "subresource"}
            if expected == "rendered":  # the script and the JSON it loads, fetched politely
                assert {"https://planted-align.example/static/planted-app.js",
                        "https://planted-align.example/api/app/live.json"} <= subs
            else:
                assert not subs
        else:
            assert final == [expected], (kind, url, final)
    outcomes = {r["outcome"] for r in log}
    assert {"fetched", "not_modified", "robots_disallowed", "timeout", "too_large",
            "host_denied"} <= outcomes
    cited = {r["cited_url"] for r in log if r["purpose"] not in ("robots",)}
    assert len(cited) >= 100


def test_fetched_records_are_indexed_with_their_origin(demo_run):
    date = demo_run.truth["fetch"]["date"]
    caps = pq.read_table(demo_run.derived / "captures" / f"crawl_date={date}" / "data.parquet")
    origins = caps.column("origin").to_pylist()
    files = caps.column("file").to_pylist()
    assert {"supplied", "fetched"} == set(origins)
    for origin, file in zip(origins, files, strict=True):
        assert (origin == "fetched") == ("/citeaudit-" in file)
    first = sorted(demo_run.truth["dates"])[0]
    if first != date:
        early = pq.read_table(demo_run.derived / "captures" / f"crawl_date={first}"
                              / "data.parquet")
        assert set(early.column("origin").to_pylist()) == {"supplied"}
    log = _log(demo_run)
    written = {(r["warc_file"], r["warc_offset"]) for r in log if r["warc_file"]}
    indexed = {(f, o) for f, o, origin in zip(files, caps.column("offset").to_pylist(), origins,
                                              strict=True) if origin == "fetched"}
    assert written <= indexed


def test_no_crawl_day_becomes_a_run_date(demo_run):
    """The fetched files sit under warc/<crawl day>/ but belong to their observation date."""
    crawl_days = {p.parent.name for p in demo_run.raw.glob("warc/*/citeaudit-*.warc.gz")}
    assert crawl_days
    done = {p.name.split("=", 1)[1] for p in (demo_run.derived / "captures").iterdir()}
    assert not (crawl_days - set(demo_run.truth["crawl_dates"])) & done
