"""The state of every asset partition, read from the Dagster instance (``citeaudit status``).

For each asset and each partition the raw folder calls for (daily assets: every date found;
date × codebook assets: every answer date × every codebook version; none for an asset that no
job runs, materialized on demand only), plus any partition the instance knows, one of:

- ``materialized``: the latest materialization is newer than everything it was computed from;
- ``stale``: materialized, but an input file is newer (answers/WARCs of its date or window,
  annotations, its codebook file), the codebook file's digest differs from the one its run
  recorded, or an upstream partition was re-materialized after it; or its date has no
  ``answers/`` or ``warc/`` folder any more (a re-import moved its answers: no run replaces it;
  ``citeaudit run`` removes it when this raw folder built it, and a removed date is not listed);
- ``failed``: the latest run that targeted it failed (or was canceled) after its last
  materialization; the step error's first line is the detail;
- ``running``: the latest run that targeted it has not finished (queued for the daemon, running,
  or its process was killed: an in-process run killed with SIGKILL stays ``STARTED``);
- ``missing``: never materialized, or its file is gone from disk.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import dagster as dg

from citeaudit import layout, storage
from pipelines import inputs
from pipelines.jobs import CODEBOOK_SHA_TAG, DERIVED_TAG
from pipelines.partitions import codebook, judged_key, judged_partition

STATES = ("materialized", "stale", "failed", "running", "missing")
FAILED_STATUSES = (dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED)
WAITING_STATUSES = (dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED)
MAX_RUNS = 20_000
PAGE = 1_000
UNPARTITIONED = ""


@dataclass(frozen=True)
class Materialization:
    """The latest materialization of one asset partition."""

    timestamp: float
    run_id: str
    path: str | None
    # Since when the partition holds these bytes: the first of the latest materializations
    # that all recorded the same sha256 (a rerun that wrote the same file changes nothing).
    content_since: float = 0.0


@dataclass(frozen=True)
class Row:
    """The state of one asset partition, with a one-line reason."""

    asset: str
    partition: str
    state: str
    detail: str = ""

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def assets_of_job(
    defs: dg.Definitions | dg.RepositoryDefinition, job_name: str
) -> list[dg.AssetKey]:
    """The asset keys a job executes, sorted."""
    job = (
        defs.resolve_job_def(job_name)
        if isinstance(defs, dg.Definitions)
        else defs.get_job(job_name)
    )
    return sorted(job.asset_layer.executable_asset_keys)


def materializations(
    instance: dg.DagsterInstance, key: dg.AssetKey, run_ids: set[str] | None = None
) -> dict[str, Materialization]:
    """The latest materialization of every partition of an asset ('' when unpartitioned), among
    the runs ``run_ids`` when given (the runs of one derived folder)."""
    latest: dict[str, Materialization] = {}
    newest_digest: dict[str, str | None] = {}
    settled: set[str] = set()
    cursor = None
    while True:
        result = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=key), limit=PAGE, cursor=cursor
        )
        for record in result.records:  # newest first
            partition = record.partition_key or UNPARTITIONED
            if partition in settled or (run_ids is not None and record.run_id not in run_ids):
                continue
            meta = record.asset_materialization.metadata if record.asset_materialization else {}
            digest = meta.get("sha256")
            digest = str(digest.value) if digest is not None else None
            if partition in latest:
                newest = latest[partition]
                if digest is not None and digest == newest_digest[partition]:
                    latest[partition] = replace(newest, content_since=record.timestamp)
                else:
                    settled.add(partition)
                continue
            path = meta.get("path")
            newest_digest[partition] = digest
            latest[partition] = Materialization(
                timestamp=record.timestamp,
                run_id=record.run_id,
                path=str(path.value) if path is not None else None,
                content_since=record.timestamp,
            )
            if digest is None:
                settled.add(partition)
        if not result.has_more:
            return latest
        cursor = result.cursor


def all_materialized_after(
    instance: dg.DagsterInstance, keys: Iterable[dg.AssetKey], partition: str, after: float | None
) -> bool:
    """True when every asset has a materialization of ``partition`` newer than ``after``."""
    for key in keys:
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=key, asset_partitions=[partition]), limit=1
        ).records
        if not records or (after is not None and records[0].timestamp < after):
            return False
    return True


class _Runs:
    """The newest run that targeted each (asset, partition), and run tags/errors on demand."""

    def __init__(
        self, instance: dg.DagsterInstance, defs: dg.Definitions, derived: Path | None = None
    ) -> None:
        self.instance = instance
        self.run_ids: set[str] = set()
        self.latest: dict[tuple[dg.AssetKey, str], dg.RunRecord] = {}
        self._tags: dict[str, dict[str, str]] = {}
        self._errors: dict[str, str] = {}
        job_assets: dict[str, list[dg.AssetKey]] = {}
        for record in instance.get_run_records(limit=MAX_RUNS):  # newest first
            run = record.dagster_run
            if derived is not None and run.tags.get(DERIVED_TAG) != str(derived):
                continue  # a run of another derived folder sharing this instance
            self.run_ids.add(run.run_id)
            self._tags[run.run_id] = dict(run.tags)
            partition = run.tags.get("dagster/partition", UNPARTITIONED)
            keys = run.asset_selection or None  # empty when the whole asset job ran
            if keys is None:
                if run.job_name not in job_assets:
                    try:
                        job_assets[run.job_name] = assets_of_job(defs, run.job_name)
                    except Exception:  # a job no longer defined: nothing to attribute
                        job_assets[run.job_name] = []
                keys = job_assets[run.job_name]
            for key in keys:
                self.latest.setdefault((key, partition), record)

    def tags(self, run_id: str) -> dict[str, str]:
        if run_id not in self._tags:
            run = self.instance.get_run_by_id(run_id)
            self._tags[run_id] = dict(run.tags) if run else {}
        return self._tags[run_id]

    def error(self, run_id: str) -> str:
        """The first line of the first step failure of a run (or of the run failure)."""
        if run_id not in self._errors:
            message = ""
            for entry in self.instance.all_logs(run_id):
                event = entry.dagster_event
                if event is None:
                    continue
                if event.event_type == dg.DagsterEventType.STEP_FAILURE:
                    error = event.step_failure_data.error
                    message = f"{event.step_key}: {error.message if error else ''}"
                    break
                if event.event_type == dg.DagsterEventType.RUN_FAILURE and not message:
                    message = event.message or "run failed"
            self._errors[run_id] = message.strip().splitlines()[0] if message.strip() else ""
        return self._errors[run_id]


def _partitions_kind(partitions_def: dg.PartitionsDefinition | None) -> str:
    if partitions_def is None:
        return "none"
    if isinstance(partitions_def, dg.MultiPartitionsDefinition):
        return "judged"
    return "daily"


def _date_of(partition: str) -> str | None:
    """The observation date of a daily or judged partition key (None when unpartitioned)."""
    if not partition:
        return None
    return judged_partition(partition)["observation_date"] if "|" in partition else partition


def orphan_detail(date: str) -> str:
    """Why a partition of a date the raw folder no longer holds is stale, and the fix."""
    return (f"no answers/{date}/ or warc/{date}/ folder under the raw folder any more (a "
            "re-import moved its answers, or the folder was deleted): no run replaces it; "
            "`citeaudit run` removes it when this raw folder built it, else remove "
            f"DERIVED/<asset>/observation_date={date}/")


def _file_on_disk(derived: Path | None, asset: str, partition: str, mat: Materialization) -> bool:
    """Whether the partition's file is still there: the ``path`` its materialization recorded,
    else any file in ``<derived>/<asset>/<key>=<date>[/codebook=<version>]/``."""
    if mat.path:
        return storage.path(mat.path).exists()
    if derived is None or not partition:
        return True
    if "|" in partition:
        folders = judged_partition(partition)
        pattern = f"*={folders['observation_date']}/codebook={folders['codebook']}/*"
    else:
        pattern = f"*={partition}/*"
    return any(p.is_file() and not p.name.startswith(".") for p in (derived / asset).glob(pattern))


def collect(
    instance: dg.DagsterInstance, defs: dg.Definitions, raw: Path, derived: Path | None = None
) -> list[Row]:
    """The state of every asset partition: daily assets, then judged ones, then unpartitioned.

    ``derived`` lets a partition whose materialization recorded no ``path`` be checked on disk.
    """
    graph = defs.resolve_asset_graph()
    kinds = {
        key: _partitions_kind(graph.get(key).partitions_def)
        for key in graph.get_all_asset_keys()
        if graph.get(key).is_materializable
    }
    order = {"daily": 0, "judged": 1, "none": 2}
    keys = sorted(kinds, key=lambda k: (order[kinds[k]], k.to_user_string()))
    runs = _Runs(instance, defs, storage.as_root(derived) if derived is not None else None)
    scope = runs.run_ids if derived is not None else None
    mats = {key: materializations(instance, key, scope) for key in keys}

    dates, _strays = layout.discover_dates(raw)
    raw_dates = set(dates)
    answer_dates = layout.answer_dates(raw)
    digests = inputs.codebook_digests(raw)
    versions = sorted(set(digests) | set(instance.get_dynamic_partitions(codebook.name)))
    window = inputs.window_days(raw, versions)
    daily_keys = [k for k in keys if kinds[k] == "daily"]
    newest_daily = {date: inputs.newest_mtime(inputs.date_files(raw, date)) for date in dates}
    judged_newest: dict[tuple[str, str], float | None] = {}

    def upstream_after(date: str, since: float) -> str | None:
        for crawl in [date, *inputs.crawl_dates_for(date, window)]:
            for key in daily_keys:
                mat = mats[key].get(crawl)
                if mat and mat.content_since > since:
                    return f"{key.to_user_string()} {crawl} changed after it"
        return None

    def staleness(key: dg.AssetKey, partition: str, mat: Materialization) -> str | None:
        kind = kinds[key]
        if kind == "daily":
            newest = newest_daily.get(partition)
            if newest is not None and newest > mat.timestamp:
                return f"answers/ or warc/ files of {partition} changed after it"
            return None
        if kind == "judged":
            folders = judged_partition(partition)
            date, version = folders["observation_date"], folders["codebook"]
            if version not in digests:
                return f"codebooks/{version}.yaml is gone"
            recorded = runs.tags(mat.run_id).get(CODEBOOK_SHA_TAG)
            if recorded and recorded != digests[version]:
                return (
                    f"codebooks/{version}.yaml changed since "
                    f"(sha256 {recorded[:12]}… → {digests[version][:12]}…)"
                )
            if (date, version) not in judged_newest:
                judged_newest[(date, version)] = inputs.newest_mtime(
                    inputs.judged_input_files(raw, date, version, window)
                )
            newest = judged_newest[(date, version)]
            if newest is not None and newest > mat.timestamp:
                return "an input (answers, window WARCs, annotations, codebook) changed after it"
            return upstream_after(date, mat.timestamp)
        upstream = graph.get(key).parent_keys
        later = [
            k.to_user_string()
            for k in keys
            if k in upstream and any(m.timestamp > mat.timestamp for m in mats[k].values())
        ]
        return (
            f"{', '.join(later[:3])}{' …' if len(later) > 3 else ''} materialized after it"
            if later
            else None
        )

    from pipelines.jobs import JOBS

    scheduled = {key for job in JOBS for key in assets_of_job(defs, job.name)}
    rows: list[Row] = []
    for key in keys:
        kind = kinds[key]
        if key not in scheduled:
            # Materialized on demand only (no job runs it, e.g. a conformance suite): report
            # the partitions it has, expect none.
            expected: set[str] = set()
        elif kind == "daily":
            expected = set(dates)
        elif kind == "judged":
            expected = {str(judged_key(d, v)) for d in answer_dates for v in versions}
        else:
            expected = {UNPARTITIONED}
        name = key.to_user_string()
        for partition in sorted(expected | set(mats[key])):
            mat = mats[key].get(partition)
            date = _date_of(partition) if kind != "none" else None
            if date is not None and partition not in expected and date not in raw_dates:
                # A date the raw folder no longer holds: no run replaces its outputs.
                if mat is not None and _file_on_disk(derived, name, partition, mat):
                    rows.append(Row(name, partition, "stale", orphan_detail(date)))
                continue  # removed by `citeaudit run` (prune_orphans), or never written
            record = runs.latest.get((key, partition))
            if (
                record is not None
                and (mat is None or record.dagster_run.run_id != mat.run_id)
                and (mat is None or record.create_timestamp.timestamp() > mat.timestamp)
            ):
                run = record.dagster_run
                if run.status in FAILED_STATUSES:
                    rows.append(
                        Row(
                            name,
                            partition,
                            "failed",
                            f"run {run.run_id[:8]}: {runs.error(run.run_id)}",
                        )
                    )
                    continue
                if not run.is_finished:
                    rows.append(
                        Row(
                            name,
                            partition,
                            "running",
                            f"run {run.run_id[:8]} {run.status.value}: "
                            + (
                                "queued, waiting for the daemon to launch it"
                                if run.status in WAITING_STATUSES
                                else "not finished (running, or its process was killed)"
                            ),
                        )
                    )
                    continue
            if mat is None:
                rows.append(Row(name, partition, "missing", "never materialized"))
            elif not _file_on_disk(derived, name, partition, mat):
                rows.append(Row(name, partition, "missing", f"file gone: {mat.path or name}"))
            else:
                why = staleness(key, partition, mat)
                rows.append(Row(name, partition, "stale" if why else "materialized", why or ""))
    return rows


def leftover_temp_files(derived: Path) -> list[Path]:
    """Temporary files of interrupted writes (``.data.parquet.tmp``): invisible to readers
    (every reader globs ``data.parquet``) and replaced by the next write of their partition."""
    if storage.is_remote(derived):
        return []  # objects are written whole: an interrupted upload leaves no object
    return sorted(derived.rglob(".*.tmp")) if derived.is_dir() else []
