"""Sensors: new codebook versions, new raw files for a date, and the judged runs after a daily one.

``codebook_sensor`` watches ``codebooks/*.yaml``. Its cursor is JSON ``{version: sha256}``. A new
version that validates is added to the dynamic ``codebook`` partition and backfilled: one run of
``judged_audit`` per answer date. A file whose bytes changed under a version already registered
is reported (skip reason and warning, every tick until resolved) and never re-registered or
re-run under the same name: numbers are comparable only within one version, so a changed
codebook must be saved as a new version (or the old file restored).

``raw_inputs_sensor`` fingerprints ``answers/<date>/`` and ``warc/<date>/`` and runs
``daily_audit`` for a date whose files are new or changed. ``judged_after_daily`` follows every
successful ``daily_audit`` run with ``judged_audit`` for the answer dates that date can change,
under every registered codebook; chaining them (rather than launching both at once) guarantees
the judged stages read the daily parquet of the same night, never the previous one.

Set ``CITEAUDIT_AUTOMATION=running`` to have the daemon start them (and the nightly schedule)
without a click in the UI; by default they are stopped.
"""

from __future__ import annotations

import json
import os

import dagster as dg

from citeaudit import codebook as codebook_lib
from citeaudit import layout, storage
from pipelines import inputs, partitions, status
from pipelines.jobs import (
    CODEBOOK_SHA_TAG,
    DERIVED_TAG,
    RAW_TAG,
    TRIGGER_TAG,
    daily_audit,
    judged_audit,
)
from pipelines.partitions import answer_date, codebook, judged_key, observation_date
from pipelines.resources import PathsResource

# Runs started by the CLI, which plans its own judged runs after the daily ones.
CLI_TRIGGERS = ("citeaudit run", "citeaudit backfill")


def automation_status() -> dg.DefaultSensorStatus:
    """RUNNING when CITEAUDIT_AUTOMATION=running, else STOPPED (start them in the UI/CLI)."""
    wanted = os.environ.get("CITEAUDIT_AUTOMATION", "stopped").strip().lower()
    return dg.DefaultSensorStatus.RUNNING if wanted == "running" else dg.DefaultSensorStatus.STOPPED


def judged_run_request(
    date: str, version: str, sha256: str, trigger: str, key_prefix: str, derived: str = ""
) -> dg.RunRequest:
    """One ``judged_audit`` run of an answer date under a codebook, tagged with the codebook's
    digest (``citeaudit status`` compares it with the file to call a partition stale)."""
    return dg.RunRequest(
        run_key=f"{key_prefix}:{version}:{sha256[:16]}:{date}",
        job_name=judged_audit.name,
        partition_key=judged_key(date, version),
        tags={TRIGGER_TAG: trigger, CODEBOOK_SHA_TAG: sha256, DERIVED_TAG: derived},
    )


def _load_cursor(cursor: str | None) -> dict[str, str]:
    if not cursor:
        return {}
    try:
        value = json.loads(cursor)
    except json.JSONDecodeError:
        return {}
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


@dg.sensor(
    name="codebook_sensor",
    job=judged_audit,
    minimum_interval_seconds=60,
    default_status=automation_status(),
    description="A new codebooks/<version>.yaml registers the codebook partition and backfills "
    "it over every answer date; a changed file is reported, never re-registered.",
)
def codebook_sensor(
    context: dg.SensorEvaluationContext, paths: PathsResource
) -> dg.SensorResult | dg.SkipReason:
    """Register and backfill new codebook versions; report changed or removed ones."""
    raw = paths.raw
    seen = _load_cursor(context.cursor)
    on_disk = inputs.codebook_digests(raw)
    registered = set(context.instance.get_dynamic_partitions(codebook.name))
    dates = layout.answer_dates(raw)
    problems: list[str] = []
    new_versions: list[str] = []
    requests: list[dg.RunRequest] = []
    cursor = dict(seen)
    for version, sha in sorted(on_disk.items()):
        if version in seen:
            if seen[version] != sha:
                problems.append(
                    f"codebook {version} changed on disk (sha256 {seen[version][:12]}… → "
                    f"{sha[:12]}…) after it was registered: not re-registered and not re-run; "
                    f"save the new rules as a new version file, or restore {version}.yaml"
                )
            continue
        try:
            codebook_lib.load_version(raw, version)
        except codebook_lib.CodebookError as exc:
            problems.append(f"codebook {version} is invalid, not registered: {exc}")
            continue
        cursor[version] = sha
        if version in registered:
            # Registered already (by `citeaudit run`, or a previous instance of this sensor):
            # adopt its digest; `citeaudit status` shows what is missing or stale.
            context.log.info(f"codebook {version} already registered; adopted sha256 {sha[:12]}…")
            continue
        new_versions.append(version)
        requests += [
            judged_run_request(d, version, sha, "codebook_sensor", "codebook",
                               str(paths.derived))
            for d in dates
        ]
    for version in sorted(set(seen) - set(on_disk)):
        problems.append(
            f"codebook {version} was registered but codebooks/{version}.yaml is gone: its "
            "partitions are kept, nothing is re-run"
        )
    for problem in problems:
        context.log.warning(problem)
    if not new_versions and cursor == seen:
        return dg.SkipReason("; ".join(problems) or "no new codebook version")
    return dg.SensorResult(
        run_requests=requests,
        dynamic_partitions_requests=(
            [codebook.build_add_request(new_versions), *_date_requests(context, dates, dates)]
            if new_versions else []
        ),
        cursor=json.dumps(cursor, sort_keys=True),
        skip_reason=("; ".join(problems) or None) if not requests else None,
    )


@dg.sensor(
    name="raw_inputs_sensor",
    job=daily_audit,
    minimum_interval_seconds=300,
    default_status=automation_status(),
    description="New or changed files under answers/<date>/ or warc/<date>/ re-run that date's "
    "daily audit (judged_after_daily then re-runs the judged stages).",
)
def raw_inputs_sensor(
    context: dg.SensorEvaluationContext, paths: PathsResource
) -> dg.SensorResult | dg.SkipReason:
    """Request ``daily_audit`` for every date whose raw files changed since the last tick.

    The cursor is JSON ``{date: fingerprint}`` (names, sizes, modification times). A date the
    cursor does not know yet is compared with the instance: if every daily asset of that date
    was materialized after its newest file, it is adopted without a run.
    """
    raw = paths.raw
    seen = _load_cursor(context.cursor)
    dates, _strays = layout.discover_dates(raw)
    cursor: dict[str, str] = {}
    requests: list[dg.RunRequest] = []
    daily_keys = status.assets_of_job(context.repository_def, daily_audit.name)
    for date in dates:
        files = inputs.date_files(raw, date)
        fp = inputs.fingerprint(raw, files)
        cursor[date] = fp
        if seen.get(date) == fp:
            continue
        if date not in seen and status.all_materialized_after(
            context.instance, daily_keys, date, inputs.newest_mtime(files)
        ):
            continue
        requests.append(
            dg.RunRequest(
                run_key=f"inputs:{date}:{fp[:16]}",
                partition_key=date,
                tags={TRIGGER_TAG: "raw_inputs_sensor", DERIVED_TAG: str(paths.derived),
                      RAW_TAG: storage.uri(raw)},
            )
        )
    if not requests and cursor == seen:
        return dg.SkipReason("no new or changed answer/WARC files")
    return dg.SensorResult(
        run_requests=requests,
        cursor=json.dumps(cursor, sort_keys=True),
        dynamic_partitions_requests=_date_requests(context, dates, layout.answer_dates(raw)),
    )


def _date_requests(
    context: dg.SensorEvaluationContext, dates: list[str], answer_dates: list[str]
) -> list[dg.AddDynamicPartitionsRequest]:
    """Requests adding the raw folder's dates the instance does not know yet (the date
    partitions are the data's dates: ``pipelines.partitions``)."""
    out = []
    for definition, keys in ((observation_date, dates), (answer_date, answer_dates)):
        known = set(context.instance.get_dynamic_partitions(definition.name))
        new = sorted(set(keys) - known)
        if new:
            out.append(definition.build_add_request(new))
    return out


@dg.run_status_sensor(
    name="judged_after_daily",
    run_status=dg.DagsterRunStatus.SUCCESS,
    monitored_jobs=[daily_audit],
    request_job=judged_audit,
    default_status=automation_status(),
    description="After a successful daily_audit of a date, run judged_audit for every answer "
    "date that date's captures can be aligned to, under every registered codebook.",
)
def judged_after_daily(
    context: dg.RunStatusSensorContext, paths: PathsResource
) -> list[dg.RunRequest] | dg.SkipReason:
    """The judged runs that follow one daily run (answer dates in its window × codebooks)."""
    raw = paths.raw
    date = context.dagster_run.tags.get("dagster/partition")
    if not date:
        return dg.SkipReason("the daily run has no partition")
    trigger = context.dagster_run.tags.get(TRIGGER_TAG, "")
    if trigger in CLI_TRIGGERS:
        return dg.SkipReason(f"{date} was run by `{trigger}`, which runs its own judged stage")
    versions = sorted(context.instance.get_dynamic_partitions(codebook.name))
    digests = inputs.codebook_digests(raw)
    versions = [v for v in versions if v in digests]
    if not versions:
        return dg.SkipReason("no registered codebook version has a file under codebooks/")
    window = inputs.window_days(raw, versions)
    targets = inputs.answer_dates_for(raw, date, window)
    if not targets:
        return dg.SkipReason(f"no answer date within the alignment window of {date}")
    partitions.register(context.instance, answer_dates=targets)
    run_id = context.dagster_run.run_id
    return [
        judged_run_request(d, v, digests[v], "judged_after_daily", f"after:{run_id}",
                           str(paths.derived))
        for d in targets
        for v in versions
    ]


SENSORS = (codebook_sensor, raw_inputs_sensor, judged_after_daily)
