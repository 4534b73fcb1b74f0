"""Backfill by codebook version, byte-identical reruns and `citeaudit status`, on real runs.

A demo corpus is run once (every date, both codebooks) with `citeaudit run`; then a backfill
of one codebook must rewrite that codebook's files and touch no other file, and `citeaudit
status` must read what happened from the Dagster instance: materialized, stale after a codebook
edit, failed, missing. (That a rerun gives the same bytes for every asset is checked on the
session's shared demo rerun, tests/pipelines/test_run_assets.py.)
"""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import dagster as dg
import pytest
from ops_support import (
    answer_day_crawls_only,
    codebook_files,
    daily_assets,
    job_assets,
    judged_assets,
    snapshot,
)

from citeaudit import cli, demo_corpus, layout
from pipelines import runlock, status
from pipelines.definitions import build_defs
from pipelines.jobs import judged_audit
from pipelines.resources import PathsResource


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("ops")
    raw, derived, home = tmp / "raw", tmp / "derived", tmp / "home"
    demo_corpus.generate(raw, seed=13, answers=10, days=2)
    answer_day_crawls_only(raw)  # two daily dates, not five: these tests read no planted case
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DAGSTER_HOME", str(home))
        assert cli.main(["run", "--raw", str(raw), "--derived", str(derived), "--quiet"]) == 0
        yield {"raw": raw, "derived": derived, "home": home}


def argv(pipeline: dict, *args: str) -> list[str]:
    return [
        args[0],
        "--raw",
        str(pipeline["raw"]),
        "--derived",
        str(pipeline["derived"]),
        *args[1:],
    ]


def state(pipeline: dict) -> list[status.Row]:
    """The status rows of the assets `citeaudit run` materializes (an asset outside its jobs,
    such as a conformance suite run on demand, is rightly `missing` here)."""
    defs = build_defs(
        PathsResource(raw_dir=str(pipeline["raw"]), derived_dir=str(pipeline["derived"]))
    )
    wanted = job_assets()
    with dg.DagsterInstance.get() as instance:
        rows = status.collect(instance, defs, pipeline["raw"], pipeline["derived"])
    return [r for r in rows if r.asset in wanted]


def test_every_judged_asset_is_in_the_judged_job() -> None:
    names = judged_assets()
    job = build_defs(PathsResource()).resolve_job_def(judged_audit.name)
    assert sorted(k.to_user_string() for k in job.asset_layer.executable_asset_keys) == names


def test_every_judged_asset_writes_each_date_and_codebook(pipeline: dict) -> None:
    derived, raw = pipeline["derived"], pipeline["raw"]
    for asset in judged_assets():
        for date in layout.answer_dates(raw):
            for version in layout.codebook_versions(raw):
                path = derived / asset / f"observation_date={date}" / f"codebook={version}"
                assert path.is_dir() and any(p.is_file() for p in path.iterdir()), (
                    f"{asset}: nothing written in {path}"
                )


def test_backfill_rewrites_one_codebook_and_touches_no_other_file(pipeline: dict) -> None:
    derived = pipeline["derived"]
    judged_assets()
    others = [
        p
        for p in derived.rglob("*")
        if p.is_file()
        and p.name not in ("catalog.duckdb", runlock.LOCK_FILE)  # the writer's own bookkeeping
        and "codebook=v2" not in p.parts
    ]
    v1 = codebook_files(derived, "v1")
    v2 = codebook_files(derived, "v2")
    assert v1 and v2, "the run wrote no codebook partition"
    before_others, before_v2 = snapshot(others), snapshot(v2)
    assert cli.main(argv(pipeline, "backfill", "--codebook", "v2", "--quiet")) == 0
    assert snapshot(others) == before_others, "the v2 backfill touched a file outside codebook=v2"
    assert snapshot(v1) == {k: before_others[k] for k in map(str, v1)}
    after_v2 = snapshot(codebook_files(derived, "v2"))
    assert after_v2.keys() == before_v2.keys()
    for path, (sha, _mtime, inode) in after_v2.items():
        assert sha == before_v2[path][0], f"{path}: a recomputation gave other bytes"
        assert inode != before_v2[path][2], f"{path}: not rewritten by the backfill"


def test_backfill_of_a_date_range(pipeline: dict) -> None:
    """A codebook edited in place makes its partitions stale, not the other codebook's; a
    backfill of a date range rewrites that range's files only and makes that range current."""
    derived, raw = pipeline["derived"], pipeline["raw"]
    first, last = layout.answer_dates(raw)[0], layout.answer_dates(raw)[-1]
    assert first != last
    judged = judged_assets()
    book = raw / "codebooks" / "v1.yaml"
    original, edited_at = book.read_bytes(), book.stat()
    book.write_bytes(original + b"\n# edited in place\n")
    try:
        rows = state(pipeline)
        stale = {(r.asset, r.partition) for r in rows if r.state == "stale"}
        assert (judged[0], f"v1|{first}") in stale
        assert not any(p.startswith("v2|") for _, p in stale)
        assert all("v1.yaml changed since" in r.detail for r in rows if r.state == "stale")
    finally:
        book.write_bytes(original)  # the bytes back, the file still newer than the outputs
    before = snapshot(codebook_files(derived, "v1"))
    # Started as a shell script starts a background job (SIGINT ignored), the runs leave SIGTERM
    # as they found it: a `kill` still stops the command and the programs it starts afterwards.
    was = signal.signal(signal.SIGINT, signal.SIG_IGN), signal.signal(signal.SIGTERM,
                                                                      signal.SIG_DFL)
    try:
        code = cli.main(argv(pipeline, "backfill", "--codebook", "v1", "--from", last,
                             "--to", last))
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGINT, was[0])
        signal.signal(signal.SIGTERM, was[1])
    assert code == 0
    after = snapshot(codebook_files(derived, "v1"))
    changed = {p for p in after if after[p][2] != before[p][2]}
    assert changed and all(f"observation_date={last}" in p for p in changed)
    assert {p for p in after if f"observation_date={first}" in p}.isdisjoint(changed)
    stale = {r.partition for r in state(pipeline) if r.state == "stale"}
    assert stale and stale <= {f"v1|{first}"}
    # The codebook's time put back as well: the other date is current again.
    os.utime(book, ns=(edited_at.st_atime_ns, edited_at.st_mtime_ns))
    assert {r.state for r in state(pipeline)} == {"materialized"}


def test_backfill_refuses_unknown_versions_and_missing_daily_data(
    pipeline: dict, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    assert cli.main(argv(pipeline, "backfill", "--codebook", "v7")) == 2
    assert "no codebooks/v7.yaml" in capsys.readouterr().err
    empty = {**pipeline, "derived": tmp_path / "nothing"}
    assert cli.main(argv(empty, "backfill", "--codebook", "v1")) == 2
    assert "is not on disk" in capsys.readouterr().err


def test_status_materialized_stale_failed_missing(
    pipeline: dict, capsys: pytest.CaptureFixture
) -> None:
    raw, derived = pipeline["raw"], pipeline["derived"]
    judged = judged_assets()
    rows = state(pipeline)
    assert rows and {r.state for r in rows} == {"materialized"}, [
        r for r in rows if r.state != "materialized"
    ]
    names = {r.asset for r in rows}
    assert set(judged) | set(daily_assets()) | {"catalog"} <= names

    # A daily run that fails is reported with its error; a deleted file is missing.
    day = layout.answer_dates(raw)[0]
    blocker = derived / "answers" / f"observation_date={day}"
    shutil.rmtree(blocker)
    blocker.write_text("not a folder")
    try:
        assert cli.main(argv(pipeline, "run", "--date", day, "--codebook", "v1", "--quiet")) == 1
        rows = {(r.asset, r.partition): r for r in state(pipeline)}
        assert rows[("answers", day)].state == "failed"
        assert "ingest_answers" in rows[("answers", day)].detail
        gone = derived / judged[0] / f"observation_date={day}" / "codebook=v2" / "data.parquet"
        gone.unlink()
        rows = {(r.asset, r.partition): r for r in state(pipeline)}
        assert rows[(judged[0], f"v2|{day}")].state == "missing"
        assert cli.main(["status", "--raw", str(raw), "--derived", str(derived)]) == 1
        out = capsys.readouterr().out
        assert "failed" in out and "answers" in out
        assert cli.main(["status", "--raw", str(raw), "--derived", str(derived), "--json"]) == 1
        report = json.loads(capsys.readouterr().out)
        assert {"asset": "answers", "partition": day, "state": "failed"}.items() <= next(
            r for r in report["partitions"] if r["asset"] == "answers" and r["partition"] == day
        ).items()
    finally:
        blocker.unlink(missing_ok=True)
    # `run --date` writes that date's partitions only (of every dated asset but the answers,
    # whose partition the blocker replaced).
    def dated() -> list[Path]:
        return [p for p in derived.rglob("data.parquet")
                if "answers" not in p.parts and any(x.startswith("observation_date=")
                                                    for x in p.parts)]

    before = snapshot(dated())
    assert cli.main(argv(pipeline, "run", "--date", day, "--quiet")) == 0
    after = snapshot(dated())
    rewritten = {p for p in after if after[p][2] != before.get(p, (None, None, None))[2]}
    assert rewritten and all(f"observation_date={day}" in p for p in rewritten), sorted(
        p for p in rewritten if f"observation_date={day}" not in p)[:5]
    assert {p.name for p in (derived / "answers").iterdir()} == {
        f"observation_date={d}" for d in layout.answer_dates(raw)}
    rows = state(pipeline)
    # Re-running one date's daily audit makes the judged partitions of the other answer dates
    # whose alignment window reaches that crawl date stale (their captures may have changed).
    assert {r.state for r in rows} <= {"materialized", "stale"}
    assert all("changed after it" in r.detail for r in rows if r.state == "stale")
    # Recomputing those (a backfill of the other dates, each codebook) makes all current again.
    others = [d for d in layout.answer_dates(raw) if d != day]
    assert {p.split("|")[-1] for _a, p in ((r.asset, r.partition) for r in rows
                                          if r.state == "stale")} <= set(others)
    for version in layout.codebook_versions(raw):
        assert cli.main(argv(pipeline, "backfill", "--codebook", version, "--from", others[0],
                             "--to", others[-1], "--quiet")) == 0
    assert {r.state for r in state(pipeline)} == {"materialized"}
