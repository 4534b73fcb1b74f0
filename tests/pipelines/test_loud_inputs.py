"""Loud inputs and safe operation: every case a new user hit gives a message or a row.

Each test builds the raw folder a user had (answers outside a date folder, a source-risk file
with another name, no codebook, a text file named .warc.gz, no registry/, two runs at once,
a deleted partition) and checks the message or the ``ignored_inputs`` row they now get.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq
import pytest
import requests

from citeaudit import cli, codebook, layout, ops_cli
from citeaudit.ingest import raw_check
from citeaudit.scholarly.transport import UNREACHABLE, UNREACHABLE_AFTER, RegistrySession
from pipelines import runlock

PROJECT = Path(__file__).resolve().parents[2]
ANSWER = {"answer_id": "a1", "query_id": "q1"}


def rows_of(raw: Path) -> list[dict]:
    return raw_check.ignored_inputs(raw).to_pylist()


def test_answers_outside_a_date_folder_is_a_row_and_a_message(tmp_path, capsys):
    raw = tmp_path / "raw"
    (raw / "answers").mkdir(parents=True)
    (raw / "answers" / "engine.jsonl").write_text(json.dumps(ANSWER) + "\n")
    assert cli.main(["init", "--raw", str(raw)]) == 0
    assert rows_of(raw) == [{
        "path": "answers/engine.jsonl", "kind": "file", "reason": "not_in_a_date_folder",
        "detail": "answer files go in answers/<YYYY-MM-DD>/ (the observation date)"}]
    capsys.readouterr()
    assert cli.main(["run", "--raw", str(raw), "--derived", str(tmp_path / "d")]) == 2
    stderr = capsys.readouterr().err
    assert "answers/engine.jsonl (not_in_a_date_folder" in stderr
    assert "no answers/<YYYY-MM-DD>/ or warc/<YYYY-MM-DD>/ folders" in stderr
    assert cli.main(["check", "--raw", str(raw)]) == 1


def test_source_risk_file_of_any_name_is_read_and_dated_by_its_answer(tmp_path):
    raw = tmp_path / "raw"
    folder = raw / "annotations" / "source_risk" / "team"
    folder.mkdir(parents=True)
    lines = [{"answer_id": "a1"}, {"answer_id": "a2"}, {"answer_id": "nobody"}]
    (folder / "risk.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines) + "{bad\n")
    for day in ("2026-11-01", "2026-11-02"):
        (raw / "answers" / day).mkdir(parents=True)
    dated = {"a1": "2026-11-01", "a2": "2026-11-02"}
    first = layout.source_risk_lines(raw, "2026-11-01", dated)
    second = layout.source_risk_lines(raw, "2026-11-02", dated)
    # Records go to their answer's date; undatable ones to the first date, to be rejected
    # there with their reason (unknown answer, malformed JSON), never dropped.
    assert [(f, n) for f, n, _ in first] == [("team/risk.jsonl", 1), ("team/risk.jsonl", 3),
                                             ("team/risk.jsonl", 4)]
    assert [(f, n) for f, n, _ in second] == [("team/risk.jsonl", 2)]
    assert rows_of(raw) == []


def test_no_codebook_stops_before_any_work_with_the_init_hint(tmp_path, capsys):
    raw = tmp_path / "raw"
    (raw / "answers" / "2026-11-01").mkdir(parents=True)
    (raw / "answers" / "2026-11-01" / "e.jsonl").write_text(json.dumps(ANSWER) + "\n")
    derived = tmp_path / "derived"
    assert cli.main(["run", "--raw", str(raw), "--derived", str(derived)]) == 2
    stderr = capsys.readouterr().err
    assert "no codebook" in stderr and f"citeaudit init --raw {raw}" in stderr
    assert not derived.exists(), "nothing may be written before the codebook check"
    assert cli.main(["init", "--raw", str(raw)]) == 0
    book = codebook.load_version(raw, "v1")
    assert book.version == "v1"
    assert (raw / "README.md").read_text().startswith("# citeaudit raw folder")
    assert rows_of(raw) == []


def test_text_file_named_warc_gz_is_one_file_level_row_not_records(tmp_path):
    raw = tmp_path / "raw"
    crawl = raw / "warc" / "2026-11-01"
    crawl.mkdir(parents=True)
    (crawl / "x.warc.gz").write_text("this is not a warc\n" * 20)
    (crawl / "gz.warc.gz").write_bytes(gzip.compress(b"<html>not a warc</html>"))
    (crawl / "ok.warc").write_bytes(b"WARC/1.0\r\nWARC-Type: warcinfo\r\n\r\n")
    (crawl / "notes.txt").write_text("crawl notes")
    (raw / "warc" / "stray.warc.gz").write_bytes(b"")
    assert layout.warc_files(raw, "2026-11-01") == [crawl / "ok.warc"]
    found = {r["path"]: (r["reason"], r["detail"]) for r in rows_of(raw)}
    assert found["warc/2026-11-01/x.warc.gz"] == (
        "not_an_archive", "starts with 'this is not a warc\\nthis ', not 'WARC/' or "
        "'filedesc://'")
    assert found["warc/2026-11-01/gz.warc.gz"][0] == "not_an_archive"
    assert found["warc/2026-11-01/notes.txt"][0] == "wrong_suffix"
    assert found["warc/stray.warc.gz"][0] == "not_in_a_date_folder"
    assert len(found) == 4


def test_real_archives_all_pass_the_first_bytes_check(corpora):
    archives = [p for p in (corpora / "warc").rglob("*") if layout.is_archive(p)]
    assert archives
    assert {str(p): layout.archive_problem(p) for p in archives} == {
        str(p): None for p in archives}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_registry_fails_fast_after_a_few_connection_failures(caplog):
    session = RegistrySession("https://api.crossref.org", f"http://127.0.0.1:{_closed_port()}",
                              timeout=1.0, max_retries=0, per_second=1000.0)
    for _ in range(UNREACHABLE_AFTER):
        with pytest.raises(requests.ConnectionError):
            session.get("https://api.crossref.org/works/10.1/x")
    assert session.last.error.startswith("connection:")
    assert "unreachable after 3 consecutive connection failures" in caplog.text
    started = time.monotonic()
    for _ in range(50):
        with pytest.raises(requests.ConnectionError, match=UNREACHABLE):
            session.get("https://api.crossref.org/works/10.1/y")
    assert time.monotonic() - started < 1.0
    assert session.last.error == UNREACHABLE
    assert session.stats.requests == UNREACHABLE_AFTER, "no request after giving up"


def test_run_lock_names_the_holder_and_takes_over_a_dead_ones(tmp_path):
    with runlock.hold(tmp_path, command="citeaudit run") as path:
        holder = json.loads(path.read_text())
        assert holder["pid"] == os.getpid()
        probe = (
            "import sys; from pipelines import runlock\n"
            "try:\n    runlock.hold(sys.argv[1]).__enter__()\n"
            "except runlock.LockHeld as exc:\n    print(exc); sys.exit(3)\n"
        )
        other = subprocess.run([sys.executable, "-c", probe, str(tmp_path)],
                               capture_output=True, text=True, cwd=PROJECT)
        assert other.returncode == 3
        assert f"PID {os.getpid()}, started {holder['started']} (citeaudit run)" in other.stdout
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    (tmp_path / runlock.LOCK_FILE).write_text(json.dumps(
        {"pid": int(dead.stdout), "started": "2026-11-01T00:00:00Z", "command": "x"}))
    warnings: list[str] = []
    with runlock.hold(tmp_path, warn=warnings.append):
        pass
    assert len(warnings) == 1
    assert f"stale lock {tmp_path / runlock.LOCK_FILE} of PID {int(dead.stdout)}" in warnings[0]
    assert "that process is dead" in warnings[0]


def _data_files(derived: Path) -> dict[str, bytes]:
    return {str(p.relative_to(derived)): p.read_bytes() for p in sorted(derived.rglob("*.parquet"))}


def test_two_runs_at_once_one_exits_naming_the_holder_outputs_equal_serial(
    small_run, tmp_path, monkeypatch, capsys
):
    """Two real `citeaudit run` processes (codebook v1) on one derived folder, then status on
    it (the serial run is the session's small shared run, conftest, its v2 files left out: a
    run of one codebook writes the daily and v1 files of a run of both)."""
    copy = small_run.copy(tmp_path / "c")
    derived = tmp_path / "fresh"
    env = {**os.environ, "DAGSTER_HOME": str(copy.home)}
    env.pop("CITEAUDIT_CROSSREF_URL", None)
    env.pop("CITEAUDIT_OPENALEX_URL", None)
    run = ["run", "--raw", str(copy.raw), "--derived", str(derived), "--quiet"]
    command = [str(Path(sys.executable).with_name("citeaudit")), *run, "--codebook", "v1"]
    procs = [subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    results = [(p.wait(timeout=600), p.stderr.read()) for p in procs]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 3], results
    refused = next(text for code, text in results if code == 3)
    assert "is being written by another citeaudit process (PID" in refused
    serial = {rel: data for rel, data in _data_files(small_run.derived).items()
              if "/codebook=v2/" not in rel}
    concurrent = _data_files(derived)
    assert concurrent.keys() == serial.keys()
    for rel in sorted(k for k in serial if serial[k] != concurrent[k]):
        # A lookup cache records when each lookup was made: equal but for that column.
        assert rel.startswith("scholarly_records/"), f"{rel}: other bytes than the serial run's"
        mine, theirs = pq.read_table(derived / rel), pq.read_table(small_run.derived / rel)
        assert mine.drop_columns(["fetched_at"]).equals(theirs.drop_columns(["fetched_at"])), rel
    assert not list(derived.rglob("*.tmp"))

    # Status and the next run in this process (same instance, same folders).
    monkeypatch.setenv("DAGSTER_HOME", str(copy.home))
    monkeypatch.delenv("CITEAUDIT_CROSSREF_URL", raising=False)
    monkeypatch.delenv("CITEAUDIT_OPENALEX_URL", raising=False)

    def status(where: Path = derived) -> dict:
        capsys.readouterr()
        cli.main(["status", "--raw", str(copy.raw), "--derived", str(where), "--json"])
        return json.loads(capsys.readouterr().out)

    ok = status()
    assert {p["state"] for p in ok["partitions"] if not p["partition"].startswith("v2|")} == {
        "materialized"}
    assert {p["state"] for p in ok["partitions"] if p["partition"].startswith("v2|")} == {
        "missing"}
    # A run of the other codebook reruns the daily audit (same bytes): no v1 output turns stale.
    assert cli.main([*run, "--codebook", "v2"]) == 0
    again = status()
    assert [p for p in again["partitions"] if p["state"] != "materialized"] == []
    victim = next(derived.glob("metrics/observation_date=*/codebook=v1/data.parquet"))
    kept = victim.read_bytes()
    victim.unlink()
    gone = status()
    missing = [p for p in gone["partitions"] if p["state"] == "missing"]
    assert [(p["asset"], p["detail"]) for p in missing] == [
        ("metrics", f"file gone: {victim}")]
    victim.write_bytes(kept)
    # A folder nothing ran into shares the instance, but none of its runs: all missing.
    none = status(tmp_path / "nowhere")
    assert {p["state"] for p in none["partitions"]} == {"missing"}
    assert pq.read_table(derived / "ignored_inputs" / "data.parquet").num_rows == 0

    # A re-import moves the answer date's answers to another date (and its crawl folder goes):
    # status calls every partition of that date stale and says why, the summary names it;
    # the next run removes its outputs because this raw folder built them (a run over another
    # raw folder keeps them), and then nothing lists or counts that date.
    from pipelines import partitions, runner

    day = layout.answer_dates(copy.raw)[0]
    for sub in ("answers", "warc"):
        if (copy.raw / sub / day).is_dir():
            shutil.rmtree(copy.raw / sub / day)
    assert ops_cli.orphan_dates(copy.raw, derived) == [day]
    orphaned = [p for p in status()["partitions"] if day in p["partition"]]
    assert orphaned and {p["state"] for p in orphaned} == {"stale"}
    assert all(f"no answers/{day}/ or warc/{day}/ folder" in p["detail"] for p in orphaned)
    ops_cli.print_summary(copy.raw, derived)
    assert f"have no answers/ or warc/ folder under {copy.raw} any more" in " ".join(
        capsys.readouterr().err.split())
    (tmp_path / "other").mkdir()
    assert runner.prune_orphans(tmp_path / "other", derived, [day]) == ([], [day])
    assert list(derived.glob(f"*/observation_date={day}"))
    assert runner.prune_orphans(copy.raw, derived, [day]) == ([day], [])
    assert not list(derived.glob(f"*/*={day}"))
    assert [p for p in status()["partitions"] if day in p["partition"]] == []
    with dg.DagsterInstance.get() as instance:
        for name in (partitions.observation_date.name, partitions.answer_date.name):
            assert day not in instance.get_dynamic_partitions(name)


def test_renamed_source_risk_file_and_no_registry_end_to_end(demo_run, tmp_path, monkeypatch,
                                                             capsys):
    """The demo's source-risk judgments merged into one `team/risk.jsonl`, and no registry/:
    the same source-risk records as the demo run, and L3 offline with the count of DOIs left
    unchecked and how to enable checking (in process, under the loopback-only guard)."""
    copy = demo_run.copy(tmp_path / "c")
    folder = copy.raw / "annotations" / "source_risk"
    dated = sorted(folder.glob("*.jsonl"))
    merged = b"".join(p.read_bytes() for p in dated)
    for path in dated:
        path.unlink()
    (folder / "team").mkdir()
    (folder / "team" / "risk.jsonl").write_bytes(merged)
    shutil.rmtree(copy.raw / "registry")
    for name in ("metadata_checks", "scholarly_records", "source_risk_records"):
        shutil.rmtree(copy.derived / name)
    monkeypatch.setenv("DAGSTER_HOME", str(copy.home))
    monkeypatch.delenv("CITEAUDIT_CROSSREF_URL", raising=False)
    monkeypatch.delenv("CITEAUDIT_OPENALEX_URL", raising=False)
    assert cli.main(["backfill", "--raw", str(copy.raw), "--derived", str(copy.derived),
                     "--codebook", "v1", "--quiet"]) == 0

    def count(derived: Path, table: str) -> int:
        files = sorted(derived.glob(f"{table}/observation_date=*/codebook=v1/data.parquet"))
        return sum(pq.read_metadata(f).num_rows for f in files)

    for table in ("source_risk_records", "rejected_records", "omission_endpoints"):
        assert count(copy.derived, table) == count(demo_run.derived, table) > 0, table
    files = {r["source_file"] for f in copy.derived.glob(
        "source_risk_records/*/codebook=v1/data.parquet") for r in pq.read_table(f).to_pylist()}
    assert files == {"team/risk.jsonl"}

    unchecked = ops_cli.offline_unchecked(copy.derived)
    assert unchecked > 0
    capsys.readouterr()
    assert cli.main(["summary", "--raw", str(copy.raw), "--derived", str(copy.derived)]) == 0
    stderr = capsys.readouterr().err
    assert f"{unchecked} DOI lookup(s) left unchecked" in stderr
    assert "CITEAUDIT_CROSSREF_URL and CITEAUDIT_OPENALEX_URL to `official`" in stderr


def test_the_date_partitions_are_the_datas_dates(tmp_path):
    """One rule for `run`, `ui` and `status`: the date partitions are the raw folder's dates
    (a crawl-only date is a daily partition, not a judged one), never a calendar up to today.
    `citeaudit ui` syncs them before the UI starts: a date of another raw folder goes, a date
    with outputs but no raw folder stays (status lists it, so the UI shows it too)."""
    import dagster as dg

    from pipelines import partitions

    raw, derived = tmp_path / "raw", tmp_path / "derived"
    for folder in ("warc/2026-10-31", "answers/2026-11-01", "warc/2026-11-01",
                   "answers/2026-11-03"):
        (raw / folder).mkdir(parents=True)
    (derived / "answers" / "observation_date=2026-10-01").mkdir(parents=True)
    with dg.DagsterInstance.ephemeral() as instance:
        partitions.register(instance, dates=["2025-01-01", "2026-10-01"],
                            answer_dates=["2025-01-01", "2026-10-01"], versions=["v1"])
        changed = partitions.sync_dates(instance, raw, derived)
        assert instance.get_dynamic_partitions("observation_date") == [
            "2026-10-01", "2026-10-31", "2026-11-01", "2026-11-03"]
        assert instance.get_dynamic_partitions("answer_date") == [
            "2026-10-01", "2026-11-01", "2026-11-03"]
        assert changed["-observation_date"] == ["2025-01-01"]
        # judged keys: the answer dates × codebooks, nothing for the crawl-only 2026-10-31
        keys = partitions.date_codebook.get_partition_keys(dynamic_partitions_store=instance)
        assert sorted(keys) == ["v1|2026-10-01", "v1|2026-11-01", "v1|2026-11-03"]
        # idempotent: a second sync changes nothing
        assert not any(partitions.sync_dates(instance, raw, derived).values())


def test_init_codebook_reads_the_label_names_the_docs_list(tmp_path):
    """docs/inputs.md lists the support rubric's five names; the codebook `init` writes maps
    each of them (and the demo's raw labels), so labels written by hand in those words are
    read, not all rejected as unknown_label."""
    raw = tmp_path / "raw"
    assert cli.main(["init", "--raw", str(raw)]) == 0
    book = codebook.load_version(raw, "v1")
    [schema] = book.label_maps
    docs = (PROJECT / "docs" / "inputs.md").read_text(encoding="utf-8")
    for label in codebook.SUPPORT_LABELS:
        assert f"`{label}`" in docs
        assert book.map_label(schema, label) == label
    assert book.map_label(schema, "partial") == "partially_supported"


@pytest.mark.parametrize(("file", "text", "names"), [
    ("citeaudit.yaml", "fetch:\n  enabeld: true\n", ("citeaudit.yaml", "fetch.enabeld")),
    ("citeaudit.yaml", "fetchh:\n  enabled: true\n", ("citeaudit.yaml", "fetchh", "known:")),
    ("citeaudit.yaml", "fetch: [1\n", ("citeaudit.yaml", "not valid YAML", "line")),
    ("codebooks/v1.yaml", None, ("v1.yaml", "policy.contextualize_above")),
])
def test_bad_settings_file_check_names_it_and_run_stops_in_one_line(tmp_path, capsys, file,
                                                                    text, names):
    """A typo in citeaudit.yaml or a codebook: `check` names file, key and fix; `run` stops
    before any work with that one line, never a traceback."""
    raw = tmp_path / "raw"
    assert cli.main(["init", "--raw", str(raw)]) == 0
    (raw / "answers" / "2026-11-01").mkdir(parents=True)
    (raw / "answers" / "2026-11-01" / "a.jsonl").write_text("{}\n")
    target = raw / file
    if text is None:  # a codebook whose threshold lies outside [0, 1]
        text = target.read_text(encoding="utf-8").replace(
            "contextualize_above: 0.5", "contextualize_above: 5")
        assert "contextualize_above: 5" in text
    target.write_text(text, encoding="utf-8")
    capsys.readouterr()
    assert cli.main(["check", "--raw", str(raw)]) == 1
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if names[0] in x)
    assert all(n in line for n in names), err
    derived = tmp_path / "derived"
    assert cli.main(["run", "--raw", str(raw), "--derived", str(derived), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    errors = [x for x in err.splitlines() if x.startswith("error:")]
    assert len(errors) == 1 and all(n in errors[0] for n in names), err
    assert not (derived / "answers").exists()
