"""In-process runs of the pipeline over every date a raw folder holds (``citeaudit run``).

One run of the ``daily_audit`` job per date executes every date-partitioned asset for that date,
then one run of ``judged_audit`` per answer date and codebook version executes every
date × codebook asset (``citeaudit backfill``: only those, for one version), in this
process (the multiprocess executor costs seconds per step here) except the judged run of a
large date whose registry lookups are still to be made (``pipelines.overlap``: its registry
step runs in a process of its own beside the CPU steps), recorded in the Dagster instance
under DAGSTER_HOME so ``dagster dev`` shows the runs; then ``rebuild_catalog`` runs.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import dagster as dg

from citeaudit import layout, project_file, storage
from citeaudit.layout import codebook_versions
from pipelines import overlap, partitions
from pipelines.definitions import build_defs
from pipelines.inputs import codebook_digests
from pipelines.jobs import (
    CODEBOOK_SHA_TAG,
    DERIVED_TAG,
    JOBS,
    RAW_TAG,
    TRIGGER_TAG,
    catalog_job,
    daily_audit,
    inputs_job,
    judged_audit,
)
from pipelines.partitions import judged_key, judged_partition
from pipelines.resources import PathsResource

# The project's Dagster instance file: dagster.yaml of the checkout, or pipelines/dagster.yaml
# in an installed wheel (setup.py copies it there).
INSTANCE_FILE = project_file("pipelines", "", "dagster.yaml")


class Step(NamedTuple):
    """One run: a label for progress output, the job, and its partition key."""

    label: str
    job: str
    partition_key: str | dg.MultiPartitionKey


def default_dagster_home(derived: Path | None = None) -> Path:
    """Where the instance lives when DAGSTER_HOME is unset: ``<derived>/.dagster_home`` (for
    a derived root on object storage, under its local state folder)."""
    return ((storage.local_state_dir(derived) if derived is not None else Path.cwd())
            / ".dagster_home").resolve()


def ensure_dagster_home(derived: Path | None = None) -> Path:
    """DAGSTER_HOME, created and given the project's dagster.yaml (or the file
    ``CITEAUDIT_DAGSTER_YAML`` names: the tests give their instances one that does not capture
    each step's stdout, which costs a ``tail`` process per step and the run's wait for it).

    Unset, it defaults to ``<derived>/.dagster_home``: the run history lives with the outputs
    it describes (for a derived root on object storage, ``<local state folder>/.dagster_home``:
    the SQLite instance is a local file; see ``storage.local_state_dir``). When it is set
    (the Makefile sets one for the project, tests set their own) one instance may hold runs
    of several derived folders, so every run is tagged with its derived folder
    (``DERIVED_TAG``) and ``citeaudit status`` reads only that folder's runs.
    """
    home = Path(os.environ.get("DAGSTER_HOME") or default_dagster_home(derived)).resolve()
    home.mkdir(parents=True, exist_ok=True)
    os.environ["DAGSTER_HOME"] = str(home)
    config = home / "dagster.yaml"
    if not config.exists():
        shutil.copyfile(os.environ.get("CITEAUDIT_DAGSTER_YAML") or INSTANCE_FILE, config)
    return home


def plan(raw: Path, dates: list[str], versions: list[str] | None = None) -> list[Step]:
    """The runs of ``citeaudit run``: the daily audit per date, then each answer date under
    each codebook (judged stages read captures from the neighbouring crawl dates, so every
    daily run comes first)."""
    versions = codebook_versions(raw) if versions is None else versions
    answer_dates = set(layout.answer_dates(raw))
    steps = [Step(date, daily_audit.name, date) for date in dates]
    steps += [
        Step(f"{date} {version}", judged_audit.name, judged_key(date, version))
        for date in dates
        if date in answer_dates
        for version in versions
    ]
    return steps


def execute_steps(
    raw: Path,
    derived: Path,
    steps: list[Step],
    *,
    on_step: Callable[[Step, bool], None] | None = None,
    verbose: bool = False,
    trigger: str = "citeaudit run",
    register: list[str] | None = None,
    check_inputs: bool = False,
    executor: str = "auto",
) -> list[Step]:
    """Execute runs, recorded in the instance, then rebuild the catalog; return the steps that
    failed.

    ``executor="in_process"`` executes every step in this process. ``"multiprocess"`` executes
    the daily and judged runs' steps in step processes, two at a time, the registry step first
    (``pipelines.overlap``); ``"auto"`` runs everything in process but the judged partition of
    a large date whose registry lookups are to be made: the registry step in a step process
    beside the steps that do not need it, then the rest (three runs of the partition).
    ``"celery"`` orchestrates here and sends each step of the daily and judged runs to the
    Celery workers; it needs a shared instance (Postgres), the broker and at least one worker,
    and raises
    ``DistributedError`` naming the one that is missing before any run starts.

    Judged runs carry the SHA-256 of their codebook file as a tag, so ``citeaudit status`` can
    tell a partition computed under an older edit of the file. ``register`` names codebook
    versions to add to the dynamic partition first (the judged partitions must exist).
    ``check_inputs`` first writes ``ignored_inputs`` (what under the raw folder is not read).
    """
    ensure_dagster_home(derived)
    run_config = {
        "loggers": {"console": {"config": {"log_level": "DEBUG" if verbose else "ERROR"}}}
    }
    paths = PathsResource(raw_dir=str(raw), derived_dir=str(derived))
    defs = build_defs(paths)
    jobs = {job.name: defs.resolve_job_def(job.name) for job in JOBS}
    has_judged = jobs[judged_audit.name].partitions_def is not None
    steps = [s for s in steps if has_judged or s.job != judged_audit.name]
    digests = codebook_digests(raw)
    failed: list[Step] = []
    launch = _launcher(executor, paths, run_config, derived)
    with _sigterm_as_found(), _open_instance(executor) as instance:
        register_codebooks(instance, codebook_versions(raw) if register is None else register)
        register_dates(instance, steps)
        # the partitions are registered: no run below adds or removes one
        with partitions.remembered(instance):
            if check_inputs:
                jobs[inputs_job.name].execute_in_process(
                    instance=instance,
                    run_config=run_config,
                    raise_on_error=True,
                    tags={TRIGGER_TAG: trigger, DERIVED_TAG: storage.uri(derived)},
                )
            for step in steps:
                tags = {TRIGGER_TAG: trigger, DERIVED_TAG: storage.uri(derived),
                        RAW_TAG: storage.uri(raw)}
                if step.job == judged_audit.name:
                    version = judged_partition(step.partition_key)["codebook"]
                    tags[CODEBOOK_SHA_TAG] = digests.get(version, "")
                result = launch(jobs[step.job], step, instance, run_config, tags)
                if not result.success:
                    failed.append(step)
                if on_step:
                    on_step(step, result.success)
            jobs[catalog_job.name].execute_in_process(
                instance=instance,
                run_config=run_config,
                raise_on_error=True,
                tags={TRIGGER_TAG: trigger, DERIVED_TAG: storage.uri(derived)},
            )
    return failed


@contextmanager
def _sigterm_as_found() -> Iterator[None]:
    """Leave SIGTERM as the runs found it. Dagster's in-process execution points SIGTERM at
    SIGINT's handler and leaves it there: where SIGINT is ignored (a command a shell script
    started in the background, a pytest-xdist worker) SIGTERM is then ignored too, by this
    process and by every program it starts afterwards (a ``kill`` no longer stops them; a
    replay server started after a run outlived its stop by 10 s, then was killed)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        if before is not None:
            signal.signal(signal.SIGTERM, before)


def _in_process(
    job: dg.JobDefinition, step: Step, instance: dg.DagsterInstance, run_config: dict,
    tags: dict[str, str],
) -> dg.ExecuteInProcessResult:
    return job.execute_in_process(
        partition_key=step.partition_key,
        instance=instance,
        raise_on_error=False,
        run_config=run_config,
        tags=tags,
    )


def _launcher(executor: str, paths: PathsResource, run_config: dict, derived: Path) -> Callable:
    """How each daily and judged run executes under ``executor`` (see :func:`execute_steps`)."""
    if executor == "celery":
        return _celery_launcher(paths, run_config)
    if executor == "in_process":
        return _in_process
    side_by_side = _multiprocess_launcher(paths, run_config)
    if executor == "multiprocess":
        return side_by_side

    def auto(job: dg.JobDefinition, step: Step, instance: dg.DagsterInstance, config: dict,
             tags: dict[str, str]):
        if step.job == judged_audit.name and overlap.overlaps(
                derived, judged_partition(step.partition_key)["observation_date"]):
            return _registry_beside(job, step, instance, config, tags, paths)
        return _in_process(job, step, instance, config, tags)

    return auto


class _Runs(NamedTuple):
    """The outcome of a partition computed as several runs: successful when every run was."""

    success: bool


def _registry_beside(
    job: dg.JobDefinition, step: Step, instance: dg.DagsterInstance, run_config: dict,
    tags: dict[str, str], paths: PathsResource,
) -> _Runs:
    """One judged partition as three runs of the job (``pipelines.overlap``): the registry step
    in a step process of its own (multiprocess location) while the steps that do not read its
    output run in this process; then the steps that do, in this process. The orchestrating
    thread of the registry run is joined before this returns."""
    registry, beside, after = overlap.split(job)
    registry_ok: list[bool] = []

    def registry_run() -> None:
        config = _with_paths(paths, run_config)
        all_tags = {**job.get_tags_for_partition_key(step.partition_key, None), **tags}
        with dg.execute_job(overlap.recon_job(step.job), instance, run_config=config,
                            tags=all_tags, asset_selection=registry) as result:
            registry_ok.append(result.success)

    thread = threading.Thread(target=registry_run, name="citeaudit-registry-run")
    thread.start()
    try:
        first = job.execute_in_process(
            partition_key=step.partition_key, instance=instance, raise_on_error=False,
            run_config=run_config, tags=tags, asset_selection=beside)
    finally:
        thread.join()
    if not (first.success and registry_ok == [True]):
        return _Runs(False)
    last = job.execute_in_process(
        partition_key=step.partition_key, instance=instance, raise_on_error=False,
        run_config=run_config, tags=tags, asset_selection=after)
    return _Runs(last.success)


def _with_paths(paths: PathsResource, base_config: dict) -> dict:
    """The run config with the folders in it: a step process or a worker elsewhere reads them
    from the run, not from its own environment."""
    return {
        **base_config,
        "resources": {
            "paths": {"config": {"raw_dir": paths.raw_dir, "derived_dir": paths.derived_dir}}
        },
    }


def _multiprocess_launcher(paths: PathsResource, base_config: dict) -> Callable:
    """Execute one run with its steps in step processes, two at a time (``execute_job`` over
    a pointer into ``pipelines.overlap_location``; the folders travel in the run's config)."""
    run_config = _with_paths(paths, base_config)

    def launch(
        job: dg.JobDefinition, step: Step, instance: dg.DagsterInstance, _config: dict,
        tags: dict[str, str],
    ) -> dg.ExecuteJobResult:
        recon = overlap.recon_job(step.job)
        all_tags = {**job.get_tags_for_partition_key(step.partition_key, None), **tags}
        with dg.execute_job(recon, instance, run_config=run_config, tags=all_tags) as result:
            return result

    return launch


def _open_instance(executor: str) -> dg.DagsterInstance:
    """The instance; for Celery, checked shareable and with the broker and a worker up."""
    if executor != "celery":
        return dg.DagsterInstance.get()
    from pipelines import distributed

    instance = distributed.open_instance()
    try:
        distributed.check_instance(instance)
        distributed.check_broker()
        distributed.check_workers()
    except distributed.DistributedError:
        instance.dispose()
        raise
    return instance


def _celery_launcher(paths: PathsResource, base_config: dict) -> Callable:
    """Execute one run with its steps on the Celery workers (``execute_job`` over a pointer
    the workers load; the run's folders travel in its config, not the workers' environment)."""
    from pipelines import distributed

    run_config = _with_paths(paths, base_config)

    def launch(
        job: dg.JobDefinition, step: Step, instance: dg.DagsterInstance, _config: dict,
        tags: dict[str, str],
    ) -> dg.ExecuteJobResult:
        recon = distributed.recon_job(step.job)
        all_tags = {**job.get_tags_for_partition_key(step.partition_key, None), **tags}
        with warnings.catch_warnings():
            # dagster-celery re-declares its one task for every step it submits; Celery warns
            # each time that the first declaration stays in force, which is what it wants.
            warnings.filterwarnings("ignore", message="Task name 'execute_plan' is already")
            with dg.execute_job(recon, instance, run_config=run_config, tags=all_tags) as result:
                return result

    return launch


def run_dates(
    raw: Path,
    derived: Path,
    dates: list[str],
    *,
    versions: list[str] | None = None,
    on_step: Callable[[Step, bool], None] | None = None,
    verbose: bool = False,
    executor: str = "auto",
) -> list[Step]:
    """Materialize the daily assets per date, the judged assets per date × codebook, then the
    catalog; return the steps that failed."""
    return execute_steps(
        raw,
        derived,
        plan(raw, dates, versions),
        on_step=on_step,
        verbose=verbose,
        register=versions,
        check_inputs=True,
        executor=executor,
    )


def backfill_plan(raw: Path, version: str, dates: list[str]) -> list[Step]:
    """The judged runs of a codebook backfill: every answer date among ``dates`` × ``version``."""
    answer_dates = set(layout.answer_dates(raw))
    return [
        Step(f"{date} {version}", judged_audit.name, judged_key(date, version))
        for date in dates
        if date in answer_dates
    ]


def backfill(
    raw: Path,
    derived: Path,
    version: str,
    dates: list[str],
    *,
    on_step: Callable[[Step, bool], None] | None = None,
    verbose: bool = False,
    executor: str = "auto",
) -> list[Step]:
    """Recompute every date × codebook asset of one codebook version over ``dates``.

    Only ``judged_audit`` runs of partitions ``date|version`` execute, and every judged asset
    writes under ``codebook=<version>/``, so no file of another codebook is opened for writing.
    """
    return execute_steps(
        raw,
        derived,
        backfill_plan(raw, version, dates),
        on_step=on_step,
        verbose=verbose,
        trigger="citeaudit backfill",
        register=[version],
        executor=executor,
    )


def register_codebooks(instance: dg.DagsterInstance, versions: list[str]) -> list[str]:
    """Add codebook versions not yet known to the dynamic partition; return the new ones."""
    return partitions.register(instance, versions=versions)[partitions.codebook.name]


def sync_partitions(raw: Path, derived: Path) -> dict[str, list[str]]:
    """Make the instance's date partitions the raw folder's dates (``partitions.sync_dates``)
    before ``citeaudit ui`` starts, so the UI lists the partitions ``citeaudit status`` lists;
    the UI's code location reads them from the instance."""
    with dg.DagsterInstance.get() as instance:
        return partitions.sync_dates(instance, raw, derived)


def register_dates(instance: dg.DagsterInstance, steps: list[Step]) -> None:
    """Add the dates the steps run to the date partitions (the partitions are the data's
    dates: ``pipelines.partitions``): a daily step's date, a judged step's answer date."""
    partitions.register(
        instance,
        dates=[str(s.partition_key) for s in steps if s.job == daily_audit.name],
        answer_dates=[judged_partition(s.partition_key)["observation_date"]
                      for s in steps if s.job == judged_audit.name],
    )


def prune_orphans(raw: Path, derived: Path, orphans: list[str]) -> tuple[list[str], list[str]]:
    """Remove the outputs of the orphan dates this raw folder built and no longer holds.

    ``orphans``: dates with outputs in ``derived`` and no ``answers/<date>/`` or
    ``warc/<date>/`` folder under ``raw`` (``citeaudit.ops_cli.orphan_dates``). One whose
    latest daily run (of this derived folder) read this raw folder (``RAW_TAG``) lost its
    answers here: every ``<asset>/observation_date=<date>/`` (or ``crawl_date=``) folder
    goes, and the date leaves the date partitions, so the catalog, the summary, the report's
    period and the UI stop counting it. An orphan built from another raw folder (or by a run
    that recorded none) is kept: a run over a partial copy of the raw folder must not delete
    what it never read.
    Return (removed, kept) dates.
    """
    if not orphans or storage.is_remote(derived):
        return [], list(orphans)
    ensure_dagster_home(derived)
    removed, kept = [], []
    with dg.DagsterInstance.get() as instance:
        for date in orphans:
            records = instance.get_run_records(
                filters=dg.RunsFilter(
                    job_name=daily_audit.name,
                    tags={DERIVED_TAG: storage.uri(derived), "dagster/partition": date},
                ),
                limit=1,
            )
            if not records or records[0].dagster_run.tags.get(RAW_TAG) != storage.uri(raw):
                kept.append(date)
                continue
            for folder in partitions.date_folders(derived, date):
                shutil.rmtree(folder)
            for name in (partitions.observation_date.name, partitions.answer_date.name):
                if instance.has_dynamic_partition(name, date):
                    instance.delete_dynamic_partition(name, date)
            removed.append(date)
    return removed, kept


def main(argv: list[str] | None = None) -> int:
    """``python -m pipelines.runner [RAW] [--derived DERIVED]``: sync the date partitions of
    the instance at DAGSTER_HOME with a raw folder (as ``citeaudit ui`` does before the UI
    starts), for the dagster CLI (``dagster asset materialize --partition <date>`` needs the
    date registered). RAW defaults to $CITEAUDIT_RAW, else data/raw; DERIVED (whose dates with
    outputs are kept, and whose .dagster_home is used when DAGSTER_HOME is unset) to
    $CITEAUDIT_DERIVED, else data/derived."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m pipelines.runner",
                                     description=main.__doc__)
    parser.add_argument("raw", nargs="?", default=os.environ.get("CITEAUDIT_RAW", "data/raw"))
    parser.add_argument("--derived", default=os.environ.get("CITEAUDIT_DERIVED"),
                        help="derived folder (default $CITEAUDIT_DERIVED, else data/derived)")
    args = parser.parse_args(argv)
    raw = storage.as_root(args.raw)
    if not storage.path(raw).is_dir():
        print(f"error: raw folder {raw} does not exist (give RAW)", file=sys.stderr)
        return 2
    derived = storage.as_root(args.derived or "data/derived")
    ensure_dagster_home(derived)  # the one rule: DAGSTER_HOME, else DERIVED/.dagster_home
    with dg.DagsterInstance.get() as instance:
        changed = partitions.sync_dates(instance, raw, derived)
    for name, keys in changed.items():
        if keys:
            print(f"{name}: {', '.join(keys)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
