"""The checks `citeaudit run --executor celery` makes before it starts: an unreachable Postgres
or broker is named at once, from the settings the user gave (no service needed here)."""

from __future__ import annotations

import shutil
import socket
import threading
from pathlib import Path

import pytest

from pipelines import distributed

PROJECT = Path(__file__).resolve().parents[2]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # released when the block ends: nothing listens there


@pytest.fixture()
def pg_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copyfile(PROJECT / "deploy" / "dagster.postgres.yaml", tmp_path / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    for name, value in {"CITEAUDIT_PG_HOST": "127.0.0.1", "CITEAUDIT_PG_USER": "u",
                        "CITEAUDIT_PG_PASSWORD": "p", "CITEAUDIT_PG_DB": "d"}.items():
        monkeypatch.setenv(name, value)
    return tmp_path


def test_postgres_address_reads_the_instance_file(pg_home: Path, monkeypatch) -> None:
    monkeypatch.setenv("CITEAUDIT_PG_PORT", "6543")
    assert distributed.postgres_address(str(pg_home)) == ("127.0.0.1", 6543)
    shutil.copyfile(PROJECT / "dagster.yaml", pg_home / "dagster.yaml")  # embedded SQLite
    assert distributed.postgres_address(str(pg_home)) is None
    assert distributed.postgres_address(None) is None


def test_an_unset_variable_is_named(pg_home: Path, monkeypatch) -> None:
    monkeypatch.delenv("CITEAUDIT_PG_PORT", raising=False)
    with pytest.raises(distributed.DistributedError, match="CITEAUDIT_PG_PORT, which is not set"):
        distributed.open_instance()


def test_a_refused_postgres_is_named_without_retries(
    pg_home: Path, monkeypatch, caplog: pytest.LogCaptureFixture
) -> None:
    port = _closed_port()
    monkeypatch.setenv("CITEAUDIT_PG_PORT", str(port))
    with pytest.raises(distributed.DistributedError, match=f"127.0.0.1:{port}.*refused"):
        distributed.open_instance()
    assert "Retrying" not in caplog.text, "dagster-postgres's retries ran (about 12 s)"


def test_a_listening_postgres_port_passes_the_check(pg_home: Path, monkeypatch) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        monkeypatch.setenv("CITEAUDIT_PG_PORT", str(server.getsockname()[1]))
        distributed.check_postgres()


def test_a_broker_that_hangs_up_is_named_after_one_attempt(monkeypatch) -> None:
    """A server that accepts and closes at once: one connection, then the error (kombu's retry
    would wait 2 s and connect again)."""
    accepted = []
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()

        def serve() -> None:
            while True:
                try:
                    conn, _ = server.accept()
                except OSError:
                    return
                accepted.append(1)
                conn.close()

        threading.Thread(target=serve, daemon=True).start()
        port = server.getsockname()[1]
        monkeypatch.setenv(distributed.BROKER_ENV, f"redis://127.0.0.1:{port}/0")
        with pytest.raises(distributed.DistributedError, match="cannot reach the Celery broker"):
            distributed.check_broker()
    assert len(accepted) == 1, f"{len(accepted)} connections: the check retried"
