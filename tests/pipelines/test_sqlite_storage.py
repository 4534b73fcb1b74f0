"""The project's Dagster instance (``pipelines.sqlite_storage``): Dagster's SQLite storage in
Dagster's layout, with one SQLAlchemy engine kept per database file and its connections reused.

A home whose ``dagster.yaml`` names the instance class must store through the project's
classes, keep its engines (not build one per connection) and their connections (not open one
per statement), hand none of them to a forked child, and leave files that Dagster's own classes
read back unchanged: a home written by one reads in the other.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from dagster import DagsterInstance, asset, materialize
from dagster._core.storage.event_log.sqlite.sqlite_event_log import INDEX_SHARD_NAME
from sqlalchemy import event

from pipelines import sqlite_storage

PROJECT_YAML = Path(__file__).resolve().parents[2] / "dagster.yaml"


@asset
def numbers() -> list[int]:
    return [1, 2, 3]


@asset
def total(numbers: list[int]) -> int:
    return sum(numbers)


def _home(path: Path, project_yaml: bool) -> Path:
    path.mkdir()
    if project_yaml:
        shutil.copyfile(PROJECT_YAML, path / "dagster.yaml")
    else:
        (path / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    return path


def test_the_project_instance_stores_through_its_classes_and_keeps_engines(tmp_path: Path):
    home = _home(tmp_path / "home", project_yaml=True)
    with DagsterInstance.from_config(str(home)) as instance:
        assert isinstance(instance, sqlite_storage.Instance)
        events = instance.event_log_storage
        assert isinstance(events, sqlite_storage.SqliteEventLogStorage)
        assert isinstance(instance.run_storage, sqlite_storage.SqliteRunStorage)
        assert isinstance(instance.schedule_storage, sqlite_storage.SqliteScheduleStorage)
        for _ in range(3):
            assert materialize([numbers, total], instance=instance).success
        run_ids = [r.run_id for r in instance.get_runs()]
        assert len(run_ids) == 3
        # one engine per database used: the index shard and each run's shard, not one per event
        cached = events._engine_cache._engines
        assert len(cached) == len(run_ids) + 1, sorted(cached)
        url = events.conn_string_for_shard(run_ids[0])
        assert events._engine_cache.get(url) is events._engine_cache.get(url)
    # Dagster's layout under the home, not somewhere else
    assert (home / "history" / "runs.db").is_file()
    assert len(list((home / "history" / "runs").glob("*.db"))) == 4  # three runs + the index


def test_a_home_reads_the_same_through_dagsters_own_classes(tmp_path: Path):
    ours = _home(tmp_path / "ours", project_yaml=True)
    with DagsterInstance.from_config(str(ours)) as instance:
        assert materialize([numbers, total], instance=instance).success
        expected = {r.run_id: [e.dagster_event_type for e in instance.all_logs(r.run_id)]
                    for r in instance.get_runs()}
    (ours / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    with DagsterInstance.from_config(str(ours)) as plain:
        assert not isinstance(plain, sqlite_storage.Instance)
        assert type(plain.event_log_storage).__module__.startswith("dagster.")
        got = {r.run_id: [e.dagster_event_type for e in plain.all_logs(r.run_id)]
               for r in plain.get_runs()}
        assert got == expected
        record = plain.get_latest_materialization_event(numbers.key)
        assert record is not None
        # and the other way: a run stored by Dagster's classes reads back through ours
        assert materialize([numbers], instance=plain).success
    (ours / "dagster.yaml").write_bytes(PROJECT_YAML.read_bytes())
    with DagsterInstance.from_config(str(ours)) as instance:
        assert len(instance.get_runs()) == 2


def test_engines_kept_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sqlite_storage, "ENGINES", 2)
    cache = sqlite_storage._Engines()
    urls = [f"sqlite:///{tmp_path / f'{i}.db'}" for i in range(4)]
    first = cache.get(urls[0])
    for url in urls[1:]:
        cache.get(url)
    assert list(cache._engines) == urls[2:]
    assert cache.get(urls[0]) is not first  # fell out, built again


def test_connections_are_reused_and_a_forked_child_opens_its_own(tmp_path: Path):
    home = _home(tmp_path / "home", project_yaml=True)
    with DagsterInstance.from_config(str(home)) as instance:
        assert materialize([numbers, total], instance=instance).success
        engines = instance.event_log_storage._engine_cache
        url = instance.event_log_storage.conn_string_for_shard(INDEX_SHARD_NAME)
        index = engines.get(url)
        opened: list[int] = []
        event.listen(index, "connect", lambda *_: opened.append(os.getpid()))
        assert materialize([numbers, total], instance=instance).success
        assert opened == [], "the index shard opened a new SQLite connection per use"
        assert index.pool.checkedin() >= 1
        pid = os.fork()
        if pid == 0:  # the child: its own connections, the parent's left alone
            try:
                ok = (engines.get(url) is not index
                      and len(instance.get_runs()) == 2
                      and materialize([numbers], instance=instance).success)
            except BaseException:  # noqa: BLE001 - reported through the exit status
                ok = False
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, "the forked child could not store a run"
        # the parent goes on through the connections it kept, and sees the child's run
        assert len(instance.get_runs()) == 3
        assert engines.get(url) is index
        assert opened == [], "the parent opened connections again after the fork"
