"""Distributed execution: the daily and judged jobs' steps as Celery tasks on any worker.

Chosen by configuration, never needed on one machine: ``CITEAUDIT_EXECUTOR=celery`` for the
code location (webserver, daemon, ``dagster job launch``), ``citeaudit run --executor celery``
for the CLI. The orchestrating process and every worker build their Celery app from the same
environment variables (``celery_app_args``), so they agree on the broker, the result backend and
the delivery settings:

``CITEAUDIT_CELERY_BROKER`` / ``CITEAUDIT_CELERY_BACKEND``
    Redis URLs (default ``redis://127.0.0.1:6379/0`` for both).
``CITEAUDIT_CELERY_VISIBILITY_TIMEOUT``
    seconds after which a step whose worker vanished (machine lost, SIGKILL) is handed to
    another worker (default 3600: it must exceed the longest step, or a slow step runs twice).

Tasks are acknowledged after they finish (``task_acks_late``), so a step whose worker died is
delivered again rather than lost; a step is idempotent (atomic partition writes, same bytes on
a rerun), so running it again is safe. Runs and events live in the shared instance
(``deploy/dagster.postgres.yaml``): a worker reports its events there.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import dagster as dg
import yaml

EXECUTOR_ENV = "CITEAUDIT_EXECUTOR"
# auto: in process, but a large date's judged run with its registry lookups still to make runs
# its steps two at a time (pipelines.overlap); multiprocess: every daily and judged run so.
EXECUTORS = ("auto", "in_process", "multiprocess", "celery")
BROKER_ENV = "CITEAUDIT_CELERY_BROKER"
BACKEND_ENV = "CITEAUDIT_CELERY_BACKEND"
VISIBILITY_ENV = "CITEAUDIT_CELERY_VISIBILITY_TIMEOUT"
DEFAULT_BROKER = "redis://127.0.0.1:6379/0"
DEFAULT_VISIBILITY_SECONDS = 3600
# The Celery queue dagster-celery routes steps to (dagster_celery.make_app).
QUEUE = "dagster"


class DistributedError(RuntimeError):
    """A service the Celery executor needs is missing or unreachable (the message says which
    and how to fix it)."""


def executor_name() -> str:
    """The executor the environment asks for (``auto`` unless ``CITEAUDIT_EXECUTOR``)."""
    name = os.environ.get(EXECUTOR_ENV, "auto").strip() or "auto"
    if name not in EXECUTORS:
        raise DistributedError(
            f"{EXECUTOR_ENV}={name!r}: expected one of {', '.join(EXECUTORS)}"
        )
    return name


def broker_url() -> str:
    return os.environ.get(BROKER_ENV) or DEFAULT_BROKER


def backend_url() -> str:
    return os.environ.get(BACKEND_ENV) or broker_url()


def visibility_timeout() -> int:
    text = os.environ.get(VISIBILITY_ENV, "")
    try:
        seconds = int(text) if text else DEFAULT_VISIBILITY_SECONDS
    except ValueError as exc:
        raise DistributedError(f"{VISIBILITY_ENV}={text!r}: not a number of seconds") from exc
    if seconds <= 0:
        raise DistributedError(f"{VISIBILITY_ENV}={text!r}: must be positive")
    return seconds


def celery_config_source() -> dict[str, Any]:
    """Celery settings shared by the orchestrating process and the workers.

    Late acknowledgement and a visibility timeout make a step survive its worker: Redis hands
    an unacknowledged task to another worker once the timeout has passed. One task at a time
    per worker process (prefetch 1), so a busy worker does not hoard the queue.
    """
    timeout = visibility_timeout()
    return {
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "broker_connection_retry_on_startup": True,
        "broker_transport_options": {
            "visibility_timeout": timeout,
            # Every worker sweeps for tasks past the timeout this often (kombu's default sweeps
            # every 100 s; a dead worker's step would wait that long after the timeout).
            "unacked_restore_interval": max(1, min(10, timeout // 5)),
            "unacked_restore_throttle": 1,
            "max_retries": 3,
            "interval_start": 0,
            "interval_step": 0.2,
            "interval_max": 0.5,
        },
        "result_backend_transport_options": {"retry_policy": {"timeout": 5.0}},
        "result_expires": 24 * 3600,
    }


def celery_executor_config() -> dict[str, Any]:
    """The ``celery_executor`` config: broker, backend and settings from the environment."""
    return {
        "broker": broker_url(),
        "backend": backend_url(),
        "config_source": celery_config_source(),
    }


def celery_executor_def() -> dg.ExecutorDefinition:
    """dagster-celery's executor, configured from the environment (imported only here: the
    single-machine path needs none of it)."""
    try:
        from dagster_celery import celery_executor
    except ImportError as exc:
        raise DistributedError(
            "the Celery executor needs dagster-celery: pip install 'citeaudit[distributed]'"
        ) from exc
    return celery_executor.configured(celery_executor_config(), name="celery")


def executor_def(name: str | None = None) -> dg.ExecutorDefinition:
    """The executor of the code location's daily and judged jobs: in-process (default, and
    ``auto``: the code location has no night to size), multiprocess or Celery."""
    name = name or executor_name()
    if name == "celery":
        return celery_executor_def()
    if name == "multiprocess":
        from pipelines.overlap import multiprocess_executor_def

        return multiprocess_executor_def()
    return dg.in_process_executor


def celery_app_args() -> dict[str, Any]:
    """The Celery app's arguments, exactly as the executor builds them for submitting steps."""
    from dagster_celery.executor import CeleryExecutor

    config = celery_executor_config()
    return CeleryExecutor.for_cli(
        broker=config["broker"], backend=config["backend"],
        config_source=config["config_source"],
    ).app_args()


def check_broker(timeout: float = 3.0) -> None:
    """Raise DistributedError unless the broker answers."""
    from kombu import Connection

    url = broker_url()
    try:
        with Connection(url, connect_timeout=timeout) as conn:
            # one attempt: kombu's retry waits 2 s before saying what one attempt already knows
            conn.ensure_connection(max_retries=0, timeout=timeout)
    except Exception as exc:
        raise DistributedError(
            f"cannot reach the Celery broker at {url} ({type(exc).__name__}: {exc}); start "
            f"Redis there or set {BROKER_ENV} to its URL"
        ) from exc


def check_workers(timeout: float = 3.0) -> list[str]:
    """The names of the workers consuming the steps' queue; DistributedError when none answers
    (a run would otherwise wait for ever)."""
    from celery import Celery

    app = Celery("citeaudit-ping", broker=broker_url(), backend=backend_url())
    try:
        replies = app.control.inspect(timeout=timeout).active_queues() or {}
    finally:
        app.close()
    names = sorted(
        name for name, queues in replies.items() if any(q.get("name") == QUEUE for q in queues)
    )
    if not names:
        raise DistributedError(
            f"no Celery worker consumes the {QUEUE!r} queue on {broker_url()}; start one on "
            "each machine: celery -A pipelines.celery_app worker --pool solo "
            "(same DAGSTER_HOME, CITEAUDIT_* variables and code)"
        )
    return names


def check_instance(instance: dg.DagsterInstance) -> None:
    """Raise DistributedError unless the instance can be shared with workers elsewhere.

    The workers write their step events into the instance the run was created in: an embedded
    SQLite instance lives in one process's DAGSTER_HOME and is not that.
    """
    storage = type(instance.run_storage).__module__
    if instance.is_ephemeral or "sqlite" in storage:
        raise DistributedError(
            f"the Celery executor needs a shared Dagster instance (Postgres), but "
            f"{os.environ.get('DAGSTER_HOME', '(DAGSTER_HOME unset)')}/dagster.yaml keeps runs in "
            "SQLite: copy deploy/dagster.postgres.yaml there and set CITEAUDIT_PG_* "
            "(docs/operations.md)"
        )


def postgres_address(home: str | None) -> tuple[str, int] | None:
    """Host and port of the Postgres database ``home``'s dagster.yaml keeps runs in (values or
    ``env:`` references, as in deploy/dagster.postgres.yaml); None when it keeps them elsewhere or
    names them in a way this does not read (a ``postgres_url``)."""
    path = Path(home or "") / "dagster.yaml"
    if not home or not path.is_file():
        return None
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        db = config["storage"]["postgres"]["postgres_db"]
        values = [db["hostname"], db.get("port", 5432)]
    except (KeyError, TypeError, yaml.YAMLError):
        return None
    for i, value in enumerate(values):
        if isinstance(value, dict) and "env" in value:
            if not os.environ.get(value["env"]):
                raise DistributedError(
                    f"{path} takes the Postgres {('host', 'port')[i]} from {value['env']}, "
                    f"which is not set: set it (and the other CITEAUDIT_PG_* variables, "
                    "docs/operations.md)")
            values[i] = os.environ[value["env"]]
    try:
        return str(values[0]), int(values[1])
    except (TypeError, ValueError):
        return None


def check_postgres(timeout: float = 3.0) -> None:
    """Raise DistributedError when nothing accepts connections where the instance's Postgres
    should be: one TCP connection, instead of dagster-postgres's retries (about 12 s and five
    warnings before the same answer)."""
    address = postgres_address(os.environ.get("DAGSTER_HOME"))
    if address is None:
        return
    try:
        socket.create_connection(address, timeout=timeout).close()
    except OSError as exc:
        raise DistributedError(
            f"cannot reach the Dagster instance's Postgres database "
            f"({os.environ.get('DAGSTER_HOME')}/dagster.yaml) at {address[0]}:{address[1]} "
            f"({exc.strerror or type(exc).__name__}); start it there or check "
            "CITEAUDIT_PG_HOST and CITEAUDIT_PG_PORT"
        ) from exc


def open_instance() -> dg.DagsterInstance:
    """The instance of DAGSTER_HOME, with a clear error when its database is unreachable."""
    check_postgres()
    try:
        return dg.DagsterInstance.get()
    except Exception as exc:
        if type(exc).__module__.split(".")[0] in ("psycopg2", "sqlalchemy", "dagster_postgres"):
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise DistributedError(
                f"cannot reach the Dagster instance's Postgres database "
                f"({os.environ.get('DAGSTER_HOME')}/dagster.yaml): {first}; check "
                "CITEAUDIT_PG_HOST, CITEAUDIT_PG_PORT, CITEAUDIT_PG_USER, CITEAUDIT_PG_PASSWORD, "
                "CITEAUDIT_PG_DB"
            ) from exc
        raise


def recon_job(name: str):  # -> ReconstructableJob
    """A job of the Celery code location (``pipelines.celery_location``), by a pointer a worker
    on another machine can load."""
    from dagster._core.definitions.reconstruct import ReconstructableRepository

    repo = ReconstructableRepository.for_module(
        "pipelines.celery_location", "defs", working_directory=os.getcwd()
    )
    return repo.get_reconstructable_job(name)
