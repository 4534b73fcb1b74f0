"""The Dagster instance of the distributed set-up (``deploy/dagster.postgres.yaml``): Dagster's
Postgres storage, with connections kept open between uses.

dagster-postgres opens its engines with ``NullPool``: a new Postgres connection (a server
process started, a login) for every statement. A Celery worker builds the instance anew for
every step it runs, and one worker of the tests' distributed run opened 1,630 connections for 21
steps (8 of its 31 CPU-s inside psycopg2's connect, as many backends started on the server).

:class:`Instance` hands the run, event-log and schedule storages of every instance in a process
one engine per database URL, which keeps up to :data:`IDLE_CONNECTIONS` connections between
uses (more open when threads need them and close when given back), checked before each use (a
connection the server dropped is replaced, not reported as an error). Connections stay in
autocommit, as dagster-postgres opens them. A forked child drops the engines it inherited,
unclosed (they are the parent's), and opens its own. The webserver still replaces them with its
own (``optimize_for_webserver``: one connection and a statement timeout). Storages that log in
with a token provider keep Dagster's engines (their connections carry the token).
"""

from __future__ import annotations

import os
import threading
from typing import Any

from dagster_postgres.event_log import PostgresEventLogStorage
from dagster_postgres.run_storage import PostgresRunStorage
from dagster_postgres.schedule_storage import PostgresScheduleStorage
from dagster_postgres.utils import create_pg_engine
from sqlalchemy.engine import Engine

from pipelines import sqlite_storage

# Postgres connections an engine keeps open between uses (a worker runs one step at a time).
IDLE_CONNECTIONS = 2


class _Engines:
    """One pooled engine per Postgres URL in this process (thread safe)."""

    lock = threading.Lock()
    by_url: dict[str, Engine] = {}

    @classmethod
    def get(cls, url: str) -> Engine:
        with cls.lock:
            engine = cls.by_url.get(url)
            if engine is None:
                engine = create_pg_engine(url, None, isolation_level="AUTOCOMMIT",
                                          pool_size=IDLE_CONNECTIONS, max_overflow=-1,
                                          pool_pre_ping=True)
                cls.by_url[url] = engine
            return engine

    @classmethod
    def forget_in_child(cls) -> None:
        for engine in cls.by_url.values():
            engine.dispose(close=False)
        cls.by_url, cls.lock = {}, threading.Lock()


os.register_at_fork(after_in_child=_Engines.forget_in_child)

POSTGRES_STORAGES = (PostgresRunStorage, PostgresEventLogStorage, PostgresScheduleStorage)


class Instance(sqlite_storage.Instance):
    """The project's instance (:class:`pipelines.sqlite_storage.Instance`) whose Postgres
    storages keep their connections. Named in ``deploy/dagster.postgres.yaml`` as::

        instance_class:
          module: pipelines.postgres_storage
          class: Instance
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for storage in (self._run_storage, self._event_storage, self._schedule_storage):
            if isinstance(storage, POSTGRES_STORAGES) and storage._token_provider is None:
                storage._engine = _Engines.get(storage.postgres_url)
