"""Real services on 127.0.0.1 for the distributed tests: PostgreSQL, Redis, Celery workers.

Each is a child process started here and stopped here by its PID (SIGTERM, then SIGKILL after a
grace period), whatever the test did. PostgreSQL's ``initdb`` refuses to run as root, so under
root the cluster is created and served by the ``postgres`` user on a folder chowned to it.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

BIN = Path(sys.executable).parent
PG_USER = "postgres"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_port(port: int, what: str, proc: subprocess.Popen | None, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode} before listening")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not listen on 127.0.0.1:{port} within {timeout:.0f} s")


def stop(proc: subprocess.Popen, grace: float = 10, sig: int = signal.SIGTERM) -> None:
    """Stop one child by its PID (and its process group): ``sig``, then SIGKILL."""
    if proc.poll() is not None:
        return
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=grace)


def pg_binaries() -> dict[str, str] | None:
    """initdb, pg_ctl and postgres on PATH (or under /usr/lib/postgresql), else None."""
    found = {name: shutil.which(name) for name in ("initdb", "postgres")}
    if not all(found.values()):
        for bindir in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
            if (bindir / "initdb").exists():
                found = {name: str(bindir / name) for name in ("initdb", "postgres")}
                break
    return found if all(found.values()) else None


def missing_binaries() -> list[str]:
    missing = [] if pg_binaries() else ["PostgreSQL (initdb, postgres)"]
    if not shutil.which("redis-server"):
        missing.append("redis-server")
    return missing


def _as_pg_user() -> list[str]:
    """The command prefix that runs a PostgreSQL binary as a non-root user."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam(PG_USER)
    except KeyError as exc:
        raise RuntimeError(f"running as root and there is no {PG_USER!r} user for initdb") from exc
    return ["runuser", "-u", PG_USER, "--"]


@dataclass
class Services:
    """Postgres and Redis on loopback ports; ``env`` holds what the instance and Celery read."""

    root: Path
    pg_port: int = 0
    redis_port: int = 0
    procs: list[subprocess.Popen] = field(default_factory=list)
    fast_stop: dict[int, int] = field(default_factory=dict)

    @property
    def broker(self) -> str:
        return f"redis://127.0.0.1:{self.redis_port}/0"

    @property
    def env(self) -> dict[str, str]:
        return {
            "CITEAUDIT_PG_HOST": "127.0.0.1",
            "CITEAUDIT_PG_PORT": str(self.pg_port),
            "CITEAUDIT_PG_USER": PG_USER,
            "CITEAUDIT_PG_PASSWORD": "",
            "CITEAUDIT_PG_DB": "postgres",
            "CITEAUDIT_CELERY_BROKER": self.broker,
            "CITEAUDIT_CELERY_BACKEND": f"redis://127.0.0.1:{self.redis_port}/1",
        }


def _start_postgres(services: Services, pg_root: Path) -> None:
    """initdb and postgres on ``pg_root``: a folder of its own under the system temp dir, since
    the ``postgres`` user cannot enter pytest's root-only temp folders."""
    bins = pg_binaries()
    assert bins is not None
    data = pg_root / "pgdata"
    sockets = pg_root / "pgsock"
    data.mkdir()
    sockets.mkdir()
    prefix = _as_pg_user()
    if prefix:
        uid = pwd.getpwnam(PG_USER).pw_uid
        for path in (pg_root, data, sockets):
            os.chown(path, uid, -1)
    init = subprocess.run(
        [*prefix, bins["initdb"], "-D", str(data), "-U", PG_USER, "--auth=trust",
         "--no-sync", "-E", "UTF8", "--locale=C"],
        capture_output=True, text=True, timeout=120,
    )
    if init.returncode != 0:
        raise RuntimeError(f"initdb failed ({init.returncode}): {init.stderr[-2000:]}")
    services.pg_port = free_port()
    log = open(services.root / "postgres.log", "wb")  # noqa: SIM115 (kept open for the server)
    proc = subprocess.Popen(
        [*prefix, bins["postgres"], "-D", str(data), "-p", str(services.pg_port),
         "-h", "127.0.0.1", "-k", str(sockets), "-c", "fsync=off", "-c", "max_connections=200"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    services.procs.append(proc)
    services.fast_stop[proc.pid] = signal.SIGINT  # postgres: "fast" shutdown, not "smart"
    wait_port(services.pg_port, "postgres", proc)


def _start_redis(services: Services) -> None:
    services.redis_port = free_port()
    proc = subprocess.Popen(
        ["redis-server", "--port", str(services.redis_port), "--bind", "127.0.0.1",
         "--save", "", "--appendonly", "no", "--dir", str(services.root)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    services.procs.append(proc)
    wait_port(services.redis_port, "redis-server", proc)


@contextmanager
def running_services(root: Path) -> Iterator[Services]:
    """PostgreSQL and Redis on free loopback ports, stopped by PID on leaving (also on error)."""
    root.mkdir(parents=True, exist_ok=True)
    services = Services(root)
    pg_root = Path(tempfile.mkdtemp(prefix="citeaudit-pg-"))
    try:
        _start_postgres(services, pg_root)
        _start_redis(services)
        yield services
    finally:
        for proc in reversed(services.procs):
            stop(proc, sig=services.fast_stop.get(proc.pid, signal.SIGTERM))
        shutil.rmtree(pg_root, ignore_errors=True)


def start_worker(name: str, env: dict[str, str], log: Path) -> subprocess.Popen:
    """One Celery worker process (solo pool: one step at a time) consuming citeaudit's steps."""
    out = open(log, "wb")  # noqa: SIM115 (kept open for the worker)
    return subprocess.Popen(
        [str(BIN / "celery"), "-A", "pipelines.celery_app", "worker", "--pool", "solo",
         "--hostname", f"{name}@%h", "--loglevel", "INFO", "--without-gossip",
         "--without-mingle", "--without-heartbeat"],
        env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
    )


def wait_workers(broker: str, count: int, timeout: float = 90) -> list[str]:
    """Block until ``count`` workers consume the steps' queue; their names."""
    from celery import Celery

    app = Celery("citeaudit-test-ping", broker=broker)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            replies = app.control.inspect(timeout=1.0).active_queues() or {}
            names = sorted(
                n for n, qs in replies.items() if any(q["name"] == "dagster" for q in qs)
            )
            if len(names) >= count:
                return names
            time.sleep(0.3)
    finally:
        app.close()
    raise RuntimeError(f"{count} Celery worker(s) did not come up within {timeout:.0f} s")
