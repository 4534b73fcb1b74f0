"""The daily and judged jobs on Dagster's own distributed execution: a Postgres instance, a Redis
broker and two Celery workers, all on 127.0.0.1, started and stopped by this module.

A small demo corpus is run once in process (embedded SQLite: the session's small shared run,
tests/conftest.py) and once with ``citeaudit run --executor celery``, during which a worker is
killed with SIGKILL while it executes a step of the judged job: the step is handed to the other
worker, nothing half-written is ever visible, and the run completes with the in-process run's
bytes. (One Celery run carries both checks: a run of this size costs about a minute.)

The roots are a parameter of the harness (``Roots``): ``ROOT_KINDS`` names the kinds the tests
run on. The Celery runs read raw and write derived in local folders, which the workers of one
machine share; S3 roots (a moto_server on loopback, as workers on several machines would share
them: ``s3_roots``) work the same but cost the run about a minute more of object requests, and
every asset's code on S3 is run by the in-process S3 run (tests/storage/test_s3_run.py).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from distributed_services import (
    Services,
    missing_binaries,
    running_services,
    start_worker,
    stop,
    wait_workers,
)
from ops_support import digests, judged_assets

from citeaudit import cli
from tests.storage.moto_s3 import MotoS3

pytestmark = pytest.mark.distributed

PROJECT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
CODEBOOK = "v1"
VISIBILITY_SECONDS = 8  # a dead worker's step goes to another worker after this
RUN_TIMEOUT = 600
# The registry cache records when each lookup was made: two independent runs differ there only
# (tests/pipelines/test_ops_crash.py compares the same way).
FETCH_TIME_COLUMNS = {"scholarly_records": "fetched_at"}


@dataclass(frozen=True)
class Roots:
    """Where a run reads and writes: ``raw`` and ``derived`` as given to ``citeaudit run``;
    ``files`` lists the visible output files (relative paths), ``read`` gives one's bytes, and
    ``outputs`` copies every visible output into a local folder (returned)."""

    raw: str
    derived: str
    files: Callable[[], list[str]]
    read: Callable[[str], bytes]
    outputs: Callable[[], Path]


def local_roots(raw: Path, derived: Path) -> Roots:
    def files() -> list[str]:
        return sorted(p.relative_to(derived).as_posix() for p in derived.rglob("*")
                      if p.is_file()) if derived.is_dir() else []

    return Roots(str(raw), str(derived), files, lambda rel: (derived / rel).read_bytes(),
                 lambda: derived)


def s3_roots(s3: MotoS3, raw: str, name: str, scratch: Path) -> Roots:
    """Derived under ``s3://<bucket>/<name>``, raw the bucket's uploaded copy of the corpus."""
    derived = s3.root(BUCKET, name)

    def outputs() -> Path:
        out = scratch / name
        shutil.rmtree(out, ignore_errors=True)
        for rel, body in s3.keys(derived).items():
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (out / rel).write_bytes(body)
        return out

    return Roots(raw, derived, lambda: s3.names(derived), lambda rel: s3.get(derived, rel),
                 outputs)


BUCKET = "citeaudit-distributed"
# The kinds of roots the Celery runs use (the module docstring says why local only).
ROOT_KINDS = ("local",)


def same_outputs(got: Path, want: Path) -> None:
    """Every output file byte-identical, except the registry cache's fetch time."""
    mine, theirs = digests(got), digests(want)
    assert mine.keys() == theirs.keys(), sorted(mine.keys() ^ theirs.keys())[:10]
    for rel in sorted(k for k in theirs if mine[k] != theirs[k]):
        column = FETCH_TIME_COLUMNS.get(rel.split("/")[0])
        assert column and rel.endswith(".parquet"), f"{rel}: other bytes than the in-process run"
        a, b = pq.read_table(got / rel), pq.read_table(want / rel)
        assert a.drop_columns([column]).equals(b.drop_columns([column])), rel


def run_command(roots: Roots, *extra: str) -> list[str]:
    return [str(BIN / "citeaudit"), "run", "--raw", roots.raw, "--derived", roots.derived,
            "--codebook", CODEBOOK, "--quiet", *extra]


@dataclass
class Cluster:
    services: Services
    env: dict[str, str]
    home: Path
    workers: dict[str, subprocess.Popen]
    logs: dict[str, Path]


@pytest.fixture(scope="module")
def s3() -> Iterator[MotoS3]:
    """A moto_server on loopback with the test bucket, stopped by PID at the end."""
    with MotoS3.start() as server:
        server.create_bucket(BUCKET)
        yield server


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
            ) -> Iterator[Cluster]:
    """Postgres, Redis and two Celery workers on loopback (and S3 when a root kind needs it);
    every process stopped by PID."""
    missing = missing_binaries()
    if missing:
        pytest.skip(f"distributed test needs {', '.join(missing)} (.ci/run installs them)")
    tmp = tmp_path_factory.mktemp("cluster")
    s3_env = request.getfixturevalue("s3").env if "s3" in ROOT_KINDS else {}
    with running_services(tmp / "services") as services:
        home = tmp / "pg_home"
        home.mkdir()
        # the deployment's instance config, with the tests' compute log manager (no capture of
        # each step's stdout on the workers: tests/dagster.yaml says why)
        config = yaml.safe_load((PROJECT / "deploy" / "dagster.postgres.yaml").read_text())
        tests_config = yaml.safe_load((PROJECT / "tests" / "dagster.yaml").read_text())
        config["compute_logs"] = tests_config["compute_logs"]
        (home / "dagster.yaml").write_text(yaml.safe_dump(config))
        env = {
            **os.environ, **services.env, **s3_env, "DAGSTER_HOME": str(home),
            "CITEAUDIT_STATE_DIR": str(tmp / "state"),
            "CITEAUDIT_CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY_SECONDS),
            "PYTHONUNBUFFERED": "1",
        }
        for var in ("CITEAUDIT_CROSSREF_URL", "CITEAUDIT_OPENALEX_URL", "CITEAUDIT_EXECUTOR"):
            env.pop(var, None)
        logs = {name: tmp / f"{name}.log" for name in ("w1", "w2")}
        workers: dict[str, subprocess.Popen] = {}
        try:
            for name, log in logs.items():
                workers[name] = start_worker(name, env, log)
            wait_workers(services.broker, len(workers))
            yield Cluster(services, env, home, workers, logs)
        finally:
            for proc in workers.values():
                stop(proc)


@pytest.fixture(scope="module", params=ROOT_KINDS)
def corpus(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
           small_run) -> dict:
    """A small demo corpus and its outputs from an in-process run on local disk: the session's
    small shared run (conftest), its codebook v2 files left out (the Celery runs run codebook v1;
    a run of one codebook writes the same daily and v1 files as a run of both); ``roots(name)``
    gives the roots of a Celery run of the same corpus."""
    tmp = tmp_path_factory.mktemp("corpus")
    raw = small_run.raw
    want = tmp / "in_process"
    shutil.copytree(small_run.derived, want, ignore=shutil.ignore_patterns("codebook=v2"))
    if request.param == "s3":
        s3 = request.getfixturevalue("s3")
        raw_uri = s3.root(BUCKET, "raw")
        s3.upload_tree(raw, raw_uri)

        def roots(name: str) -> Roots:
            return s3_roots(s3, raw_uri, name, tmp / "downloads")
    else:
        def roots(name: str) -> Roots:
            return local_roots(raw, tmp / name)
    return {"tmp": tmp, "raw": raw, "want": want, "kind": request.param, "roots": roots}


TASK_LINE = re.compile(r"Task execute_plan\[([0-9a-f-]+)\] (received|succeeded|failed|raised)")


def in_flight(log: Path) -> list[str]:
    """Task ids the worker received and has not finished."""
    state: dict[str, str] = {}
    for task, what in TASK_LINE.findall(log.read_text(errors="replace")):
        state[task] = what
    return [task for task, what in state.items() if what == "received"]


@pytest.fixture(scope="module")
def celery_run(cluster: Cluster, corpus: dict) -> dict:
    """``citeaudit run --executor celery`` of the corpus; once a judged step is in flight on a
    worker, that worker is killed with SIGKILL, and every output visible right then is read
    whole. Returns the roots, the victim worker, the task it held and the files seen."""
    roots = corpus["roots"]("celery")
    names = judged_assets()
    proc = subprocess.Popen(run_command(roots, "--executor", "celery"), env=cluster.env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    victim = task = None
    visible: list[str] = []
    try:
        deadline = time.monotonic() + RUN_TIMEOUT
        while proc.poll() is None and time.monotonic() < deadline:
            judged_started = any(f.split("/")[0] in names for f in roots.files())
            busy = {n: in_flight(log) for n, log in cluster.logs.items()}
            busy = {n: ids for n, ids in busy.items() if ids}
            if judged_started and busy:
                victim, ids = sorted(busy.items())[0]
                task = ids[0]
                os.killpg(cluster.workers[victim].pid, signal.SIGKILL)
                cluster.workers[victim].wait(timeout=30)
                break
            time.sleep(0.05)
        # Right after the kill, every visible file reads whole.
        visible = [f for f in roots.files() if f.endswith("data.parquet")]
        for rel in visible:
            pq.read_table(pa.BufferReader(roots.read(rel)))
        _out, err = proc.communicate(timeout=RUN_TIMEOUT)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    assert proc.returncode == 0, err[-3000:]
    return {"roots": roots, "victim": victim, "task": task, "visible": visible}


def test_celery_run_gives_the_in_process_bytes(corpus: dict, celery_run: dict) -> None:
    got = celery_run["roots"].outputs()
    assert {rel.split("/")[0] for rel in digests(got)} >= set(judged_assets())
    same_outputs(got, corpus["want"])


def test_runs_are_in_postgres_and_steps_ran_on_both_workers(
    cluster: Cluster, celery_run: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in cluster.env.items():
        if key.startswith(("CITEAUDIT_PG_", "DAGSTER_HOME")):
            monkeypatch.setenv(key, value)
    with dg.DagsterInstance.get() as instance:
        assert "postgres" in type(instance.run_storage).__module__
        runs = instance.get_runs(
            dg.RunsFilter(tags={"citeaudit/derived": celery_run["roots"].derived})
        )
        jobs = sorted({run.job_name for run in runs})
        assert {"daily_audit", "judged_audit"} <= set(jobs)
        assert all(run.status == dg.DagsterRunStatus.SUCCESS for run in runs)
        # The registry step claimed a slot of its pool, limited to one across all workers.
        pool = instance.event_log_storage.get_concurrency_info("scholarly_registries")
        assert pool.limit == 1 and not pool.claimed_slots
        assert "scholarly_registries" in instance.event_log_storage.get_concurrency_keys()
    for name, log in cluster.logs.items():
        assert "succeeded in" in log.read_text(errors="replace"), f"worker {name} ran no step"


def test_the_postgres_instance_keeps_its_connections(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deployment's instance (deploy/dagster.postgres.yaml) is the project's, whose Postgres
    storages share one engine per database in a process and reuse its connections."""
    from sqlalchemy import event

    from pipelines import postgres_storage

    for key, value in cluster.env.items():
        if key.startswith(("CITEAUDIT_PG_", "DAGSTER_HOME")):
            monkeypatch.setenv(key, value)
    with dg.DagsterInstance.get() as instance:
        assert isinstance(instance, postgres_storage.Instance)
        engine = instance.run_storage._engine
        assert instance.event_log_storage._engine is engine  # one database: one engine
        opened: list[int] = []
        event.listen(engine, "connect", lambda *_: opened.append(1))
        for _ in range(5):
            instance.get_runs(limit=1)
            instance.event_log_storage.get_concurrency_keys()
        assert len(opened) <= 1, f"{len(opened)} connections for 10 statements"
        assert engine.pool.checkedin() >= 1
    with dg.DagsterInstance.get() as again:  # a worker builds an instance for every step
        assert again.run_storage._engine is engine


def test_unreachable_services_are_named(
    cluster: Cluster, corpus: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    roots = corpus["roots"]("refused")
    argv = run_command(roots, "--executor", "celery")[1:]
    sqlite_home = tmp_path / "sqlite_home"
    sqlite_home.mkdir()
    shutil.copyfile(PROJECT / "dagster.yaml", sqlite_home / "dagster.yaml")
    cases = {
        "cannot reach the Celery broker": {
            "CITEAUDIT_CELERY_BROKER": f"redis://127.0.0.1:{_closed_port()}/0"},
        "no Celery worker consumes": {
            "CITEAUDIT_CELERY_BROKER": f"redis://127.0.0.1:{cluster.services.redis_port}/7"},
        "cannot reach the Dagster instance's Postgres": {"CITEAUDIT_PG_PORT": str(_closed_port())},
        "needs a shared Dagster instance": {"DAGSTER_HOME": str(sqlite_home)},
    }
    for needle, override in cases.items():
        for key, value in {**cluster.env, **override}.items():
            monkeypatch.setenv(key, value)
        code = cli.main(argv)
        message = " ".join(capsys.readouterr().err.split())
        assert code == 4, (needle, message[-2000:])
        assert needle in message, (needle, message[-2000:])
    assert not [f for f in roots.files() if f.endswith("data.parquet")], \
        "a refused run wrote outputs"


def _closed_port() -> int:
    from distributed_services import free_port

    return free_port()  # bound and released at once: nothing listens there


def test_sigkill_of_a_busy_worker_hands_its_step_to_the_other(
    cluster: Cluster, celery_run: dict
) -> None:
    victim, task, roots = celery_run["victim"], celery_run["task"], celery_run["roots"]
    assert victim, "the run ended before a judged step was seen on a worker"
    assert celery_run["visible"], "no output was visible when the worker was killed"
    survivor = next(n for n in cluster.logs if n != victim)
    finished = dict(TASK_LINE.findall(cluster.logs[survivor].read_text(errors="replace")))
    assert finished.get(task) == "succeeded", f"step {task} of the dead worker was not redone"
    assert not [f for f in roots.files() if f.endswith(".tmp")], \
        "a temporary file of the killed step survived"
