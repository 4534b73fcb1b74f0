"""The codebook sensor (with its cursor), the raw-input sensor, the nightly schedule and the
judged runs that follow a daily run, evaluated on a real demo corpus and a real instance."""

from __future__ import annotations

import datetime as dt
import importlib
import json
import shutil
from pathlib import Path

import dagster as dg
import pytest

from citeaudit import demo_corpus, layout
from pipelines import jobs, schedules, sensors
from pipelines.definitions import build_defs
from pipelines.jobs import daily_audit, judged_audit
from pipelines.partitions import codebook
from pipelines.resources import PathsResource


@pytest.fixture()
def raw(tmp_path: Path) -> Path:
    folder = tmp_path / "raw"
    demo_corpus.generate(folder, seed=5, answers=24, days=2)
    return folder


@pytest.fixture()
def instance():
    with dg.DagsterInstance.ephemeral() as inst:
        yield inst


@pytest.fixture()
def ref_instance():
    """An instance with a reference (the nightly schedule registers its date in it, as the
    daemon's does), on a temporary folder."""
    with dg.instance_for_test() as inst:
        yield inst


def paths(raw: Path) -> dict[str, PathsResource]:
    return {"paths": PathsResource(raw_dir=str(raw), derived_dir=str(raw.parent / "derived"))}


def tick(sensor, instance, raw: Path, cursor: str | None, defs=None):
    context = dg.build_sensor_context(
        instance=instance, cursor=cursor, resources=paths(raw), definitions=defs
    )
    return sensor(context)


def add_version(raw: Path, version: str, like: str = "v2") -> None:
    text = (raw / "codebooks" / f"{like}.yaml").read_text()
    (raw / "codebooks" / f"{version}.yaml").write_text(
        text.replace(f"version: {like}", f"version: {version}")
    )


def added(result, name: str) -> list[str]:
    """The keys a sensor result asks to add to the dynamic partitions ``name``."""
    return sorted(k for r in result.dynamic_partitions_requests
                  if r.partitions_def_name == name for k in r.partition_keys)


def requested(result) -> set[tuple[str, str]]:
    return {(r.job_name or judged_audit.name, str(r.partition_key)) for r in result.run_requests}


def test_codebook_sensor_registers_new_versions_and_backfills_every_answer_date(
    raw: Path, instance: dg.DagsterInstance
) -> None:
    dates = layout.answer_dates(raw)
    assert len(dates) == 2
    first = tick(sensors.codebook_sensor, instance, raw, None)
    assert isinstance(first, dg.SensorResult)
    assert added(first, codebook.name) == ["v1", "v2"]
    # the answer dates its runs target are partitions too (the partitions are the data's dates)
    assert added(first, "answer_date") == dates
    assert requested(first) == {
        (judged_audit.name, f"{v}|{d}") for v in ("v1", "v2") for d in dates
    }
    digests = json.loads(first.cursor)
    assert set(digests) == {"v1", "v2"} and all(len(s) == 64 for s in digests.values())
    tags = first.run_requests[0].tags
    assert tags[jobs.CODEBOOK_SHA_TAG] in digests.values()

    # The daemon applies the partition requests; the next tick with the cursor has nothing to do.
    instance.add_dynamic_partitions(codebook.name, ["v1", "v2"])
    second = tick(sensors.codebook_sensor, instance, raw, first.cursor)
    assert isinstance(second, dg.SkipReason)
    assert "no new codebook version" in second.skip_message

    # A new file is a new version: only its partitions are requested.
    add_version(raw, "v3")
    third = tick(sensors.codebook_sensor, instance, raw, first.cursor)
    assert added(third, codebook.name) == ["v3"]
    assert requested(third) == {(judged_audit.name, f"v3|{d}") for d in dates}
    assert set(json.loads(third.cursor)) == {"v1", "v2", "v3"}


def test_a_changed_codebook_is_reported_never_re_registered(
    raw: Path, instance: dg.DagsterInstance
) -> None:
    first = tick(sensors.codebook_sensor, instance, raw, None)
    instance.add_dynamic_partitions(codebook.name, ["v1", "v2"])
    book = raw / "codebooks" / "v1.yaml"
    book.write_text(book.read_text() + "\n# edited in place after registration\n")
    result = tick(sensors.codebook_sensor, instance, raw, first.cursor)
    assert isinstance(result, dg.SkipReason)
    assert "codebook v1 changed on disk" in result.skip_message
    # Reported again on the next tick (the cursor still holds the registered digest).
    again = tick(sensors.codebook_sensor, instance, raw, first.cursor)
    assert "codebook v1 changed on disk" in again.skip_message

    # A changed file next to a new version: the new one runs, the changed one is still only
    # reported and keeps its registered digest in the cursor.
    add_version(raw, "v3")
    mixed = tick(sensors.codebook_sensor, instance, raw, first.cursor)
    assert {p for _, p in requested(mixed)} == {f"v3|{d}" for d in layout.answer_dates(raw)}
    assert json.loads(mixed.cursor)["v1"] == json.loads(first.cursor)["v1"]

    # A removed file is reported; nothing is deleted or re-run.
    (raw / "codebooks" / "v2.yaml").unlink()
    gone = tick(sensors.codebook_sensor, instance, raw, mixed.cursor)
    assert "codebooks/v2.yaml is gone" in gone.skip_message


def test_an_invalid_codebook_is_not_registered(raw: Path, instance: dg.DagsterInstance) -> None:
    (raw / "codebooks" / "v9.yaml").write_text("version: v9\nlabel_maps: [not, a, mapping]\n")
    result = tick(sensors.codebook_sensor, instance, raw, None)
    assert added(result, codebook.name) == ["v1", "v2"]
    assert "v9" not in json.loads(result.cursor)
    again = tick(sensors.codebook_sensor, instance, raw, result.cursor)
    assert isinstance(again, dg.SkipReason)
    assert "codebook v9 is invalid" in again.skip_message


def test_versions_registered_by_a_run_are_adopted_without_runs(
    raw: Path, instance: dg.DagsterInstance
) -> None:
    instance.add_dynamic_partitions(codebook.name, ["v1"])
    result = tick(sensors.codebook_sensor, instance, raw, None)
    assert {p.split("|")[0] for _, p in requested(result)} == {"v2"}
    assert set(json.loads(result.cursor)) == {"v1", "v2"}


def test_raw_inputs_sensor_requests_changed_dates_only(
    raw: Path, instance: dg.DagsterInstance
) -> None:
    defs = build_defs(paths(raw)["paths"])
    dates, _ = layout.discover_dates(raw)
    first = tick(sensors.raw_inputs_sensor, instance, raw, None, defs)
    assert sorted(str(r.partition_key) for r in first.run_requests) == dates
    # every requested date is added to the date partitions (the data's dates, nothing else)
    assert added(first, "observation_date") == dates
    assert added(first, "answer_date") == layout.answer_dates(raw)
    quiet = tick(sensors.raw_inputs_sensor, instance, raw, first.cursor, defs)
    assert isinstance(quiet, dg.SkipReason)
    day = layout.answer_dates(raw)[0]
    extra = raw / "answers" / day / "late.jsonl"
    shutil.copyfile(next((raw / "answers" / day).glob("*.jsonl")), extra)
    changed = tick(sensors.raw_inputs_sensor, instance, raw, first.cursor, defs)
    assert [str(r.partition_key) for r in changed.run_requests] == [day]
    assert changed.run_requests[0].tags[jobs.TRIGGER_TAG] == "raw_inputs_sensor"
    # A new WARC date appears.
    new_day = "2030-01-01"
    (raw / "warc" / new_day).mkdir(parents=True)
    shutil.copyfile(next((raw / "warc").rglob("*.warc.gz")), raw / "warc" / new_day / "x.warc.gz")
    later = tick(sensors.raw_inputs_sensor, instance, raw, changed.cursor, defs)
    assert [str(r.partition_key) for r in later.run_requests] == [new_day]
    assert new_day in added(later, "observation_date")


def test_nightly_schedule_requests_yesterday(raw: Path, ref_instance: dg.DagsterInstance) -> None:
    instance = ref_instance
    assert schedules.nightly_audit.cron_schedule == "0 2 * * *"
    assert schedules.nightly_audit.execution_timezone == "UTC"
    assert schedules.nightly_audit.job_name == daily_audit.name
    last = layout.answer_dates(raw)[-1]
    at = dt.datetime.combine(
        dt.date.fromisoformat(last) + dt.timedelta(days=1), dt.time(2, 0), tzinfo=dt.UTC
    )
    # `with`: the context's own instance (opened from the reference) is closed after the tick
    with dg.build_schedule_context(
        instance=instance, scheduled_execution_time=at, resources=paths(raw)
    ) as context:
        request = schedules.nightly_audit(context)
    assert isinstance(request, dg.RunRequest)
    assert request.partition_key == last
    assert last in instance.get_dynamic_partitions("observation_date")
    assert request.tags[jobs.TRIGGER_TAG] == "nightly_audit"
    with dg.build_schedule_context(
        instance=instance,
        scheduled_execution_time=dt.datetime(2031, 5, 2, 2, 0, tzinfo=dt.UTC),
        resources=paths(raw),
    ) as empty:
        skip = schedules.nightly_audit(empty)
    assert isinstance(skip, dg.SkipReason) and "2031-05-01" in skip.skip_message


def test_nightly_schedule_time_is_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEAUDIT_NIGHTLY_CRON", "30 4 * * *")
    monkeypatch.setenv("CITEAUDIT_NIGHTLY_TIMEZONE", "Europe/Paris")
    try:
        reloaded = importlib.reload(schedules)
        assert reloaded.nightly_audit.cron_schedule == "30 4 * * *"
        assert reloaded.nightly_audit.execution_timezone == "Europe/Paris"
    finally:
        monkeypatch.delenv("CITEAUDIT_NIGHTLY_CRON")
        monkeypatch.delenv("CITEAUDIT_NIGHTLY_TIMEZONE")
        importlib.reload(schedules)
    assert schedules.nightly_audit.cron_schedule == "0 2 * * *"


def test_nightly_chain_daily_then_every_codebook(
    raw: Path, ref_instance: dg.DagsterInstance
) -> None:
    """The nightly tick runs yesterday's daily audit; its success requests yesterday (and the
    answer dates whose window reaches yesterday's crawl) under every registered codebook."""
    instance = ref_instance
    resources = paths(raw)
    defs = build_defs(resources["paths"])
    yesterday = layout.answer_dates(raw)[-1]
    at = dt.datetime.combine(
        dt.date.fromisoformat(yesterday) + dt.timedelta(days=1), dt.time(2), tzinfo=dt.UTC
    )
    with dg.build_schedule_context(
        instance=instance, scheduled_execution_time=at, resources=resources
    ) as context:
        request = schedules.nightly_audit(context)
    result = defs.resolve_job_def(daily_audit.name).execute_in_process(
        partition_key=request.partition_key, instance=instance, tags=request.tags
    )
    assert result.success
    instance.add_dynamic_partitions(codebook.name, ["v1", "v2"])
    run = instance.get_run_by_id(result.run_id)
    (success,) = instance.all_logs(result.run_id, of_type=dg.DagsterEventType.RUN_SUCCESS)
    context = dg.build_run_status_sensor_context(
        sensor_name="judged_after_daily",
        dagster_event=success.dagster_event,
        dagster_instance=instance,
        dagster_run=run,
        resources=resources,
    )
    follow = sensors.judged_after_daily(context)
    keys = {str(r.partition_key) for r in follow}
    assert {f"v1|{yesterday}", f"v2|{yesterday}"} <= keys
    # Every answer date whose alignment window (7 days before, 1 after) reaches this crawl date.
    assert keys == {f"{v}|{d}" for v in ("v1", "v2") for d in layout.answer_dates(raw)}
    assert all(r.tags[jobs.CODEBOOK_SHA_TAG] for r in follow)

    # The raw-input sensor adopts a date already materialized after its newest file.
    first = tick(sensors.raw_inputs_sensor, instance, raw, None, defs)
    assert yesterday not in {str(r.partition_key) for r in first.run_requests}


def test_daily_runs_of_the_cli_are_not_followed_twice(
    raw: Path, instance: dg.DagsterInstance
) -> None:
    """`citeaudit run` plans its own judged runs: the sensor must not launch them again."""
    defs = build_defs(paths(raw)["paths"])
    day = layout.answer_dates(raw)[0]
    instance.add_dynamic_partitions("observation_date", [day])
    result = defs.resolve_job_def(daily_audit.name).execute_in_process(
        partition_key=day, instance=instance, tags={jobs.TRIGGER_TAG: "citeaudit run"}
    )
    assert result.success
    instance.add_dynamic_partitions(codebook.name, ["v1"])
    (success,) = instance.all_logs(result.run_id, of_type=dg.DagsterEventType.RUN_SUCCESS)
    context = dg.build_run_status_sensor_context(
        sensor_name="judged_after_daily",
        dagster_event=success.dagster_event,
        dagster_instance=instance,
        dagster_run=instance.get_run_by_id(result.run_id),
        resources=paths(raw),
    )
    skip = sensors.judged_after_daily(context)
    assert isinstance(skip, dg.SkipReason) and "citeaudit run" in skip.skip_message
