"""The Dagster instance's SQLite storage, keeping one SQLAlchemy engine per database file and a
few idle connections per engine.

Dagster's own SQLite storages (runs, event logs, schedules) build a new SQLAlchemy engine for
every connection and throw it away after (``NullPool``: a new SQLite connection per use). That
costs the engine's set-up, its statement cache (every event Dagster stores compiled its INSERT
again) and a connection opened and closed per statement. A run stores a few events per step
(about 800 in the demo's run) and reads the latest materializations of each step's inputs.

These subclasses change that one thing. Each keeps its engines (at most :data:`ENGINES` of
them, the most recently used: the event log has one database per run, and the UI may read
hundreds) and each engine keeps up to :data:`IDLE_CONNECTIONS` SQLite connections between uses
(more are opened when threads need them, and closed when they are given back). An idle
connection holds no transaction and no lock, so other processes write the same files as before
(SQLite locks per transaction); a process that forks drops the engines it inherited, unclosed
(they belong to the parent), and opens its own. The project's ``dagster.yaml`` names
:class:`Instance` as its ``instance_class``, whose default storage they are, in Dagster's own
layout (``history/``, ``history/runs/``, ``schedules/`` under the instance's home); a home whose
``dagster.yaml`` does not name it reads the same files through Dagster's classes.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import yaml
from dagster import DagsterInstance
from dagster._core.instance.ref import InstanceRef
from dagster._core.storage import sqlite_storage
from dagster._core.storage.base_storage import DagsterStorage
from dagster._core.storage.event_log.sqlite import sqlite_event_log
from dagster._core.storage.runs.sqlite import sqlite_run_storage
from dagster._core.storage.schedules.sqlite import sqlite_schedule_storage
from dagster._serdes import ConfigurableClassData
from sqlalchemy import create_engine
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import QueuePool

# Engines kept per storage: the index shard and the runs being written or read.
ENGINES = 32
# SQLite connections an engine keeps open between uses (a run's steps use one at a time).
IDLE_CONNECTIONS = 2


class _Engines:
    """The most recently used engines by database URL (thread safe). An engine that falls out
    is disposed of: its idle connections close, one in use closes when it is given back."""

    def __init__(self, **engine_args: Any) -> None:
        self._args = engine_args
        self._engines: OrderedDict[str, Engine] = OrderedDict()
        self._lock = threading.Lock()
        _ALL.add(self)

    def get(self, url: str) -> Engine:
        with self._lock:
            engine = self._engines.get(url)
            if engine is None:
                engine = create_engine(url, poolclass=QueuePool, pool_size=IDLE_CONNECTIONS,
                                       max_overflow=-1, **self._args)
                self._engines[url] = engine
                while len(self._engines) > ENGINES:
                    self._engines.popitem(last=False)[1].dispose()
            else:
                self._engines.move_to_end(url)
            return engine

    def _forget_in_child(self) -> None:
        """In a forked child: drop the parent's engines without closing their connections
        (SQLAlchemy's ``dispose(close=False)``), so the child opens its own."""
        for engine in self._engines.values():
            engine.dispose(close=False)
        self._engines = OrderedDict()
        self._lock = threading.Lock()


_ALL: weakref.WeakSet[_Engines] = weakref.WeakSet()
os.register_at_fork(after_in_child=lambda: [cache._forget_in_child() for cache in list(_ALL)])


@contextmanager
def _transaction(engine: Engine) -> Iterator[Connection]:
    """One connection and one transaction, as Dagster's ``connect`` opens them."""
    with engine.connect() as conn, conn.begin():
        yield conn


class _OneDatabase:
    """``connect`` over a kept engine, for the storages that live in one SQLite file (``from_local``
    builds them as ``cls(conn_string, inst_data)``)."""

    _conn_string: str

    def __init__(self, conn_string: str, inst_data: ConfigurableClassData | None = None) -> None:
        self._engine_cache = _Engines()
        super().__init__(conn_string, inst_data)  # type: ignore[call-arg]

    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData | None, config_value: Any) -> Any:
        return cls.from_local(inst_data=inst_data, **config_value)  # type: ignore[attr-defined]

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        with _transaction(self._engine_cache.get(self._conn_string)) as conn:
            yield conn


class SqliteRunStorage(_OneDatabase, sqlite_run_storage.SqliteRunStorage):
    """Dagster's SQLite run storage with its engine kept."""


class SqliteScheduleStorage(_OneDatabase, sqlite_schedule_storage.SqliteScheduleStorage):
    """Dagster's SQLite schedule storage with its engine kept."""


class SqliteEventLogStorage(sqlite_event_log.SqliteEventLogStorage):
    """Dagster's SQLite event log (one database per run, plus the index shard) with an engine
    kept per database."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None) -> None:
        self._engine_cache = _Engines(
            connect_args={"timeout": sqlite_event_log.SQLITE_BUSY_TIMEOUT_SECONDS})
        super().__init__(base_dir, inst_data)

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData | None, config_value: Any
    ) -> SqliteEventLogStorage:
        return cls(inst_data=inst_data, **config_value)

    @contextmanager
    def _connect(self, shard: str) -> Iterator[Connection]:
        with self._db_lock:
            engine = self._engine_cache.get(self.conn_string_for_shard(shard))
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
            with _transaction(engine) as conn:
                yield conn


def _data(cls: type, base_dir: str) -> ConfigurableClassData:
    return ConfigurableClassData(cls.__module__, cls.__name__,
                                 yaml.dump({"base_dir": base_dir}, default_flow_style=False))


class SqliteStorage(sqlite_storage.DagsterSqliteStorage):
    """The three storages above over Dagster's SQLite layout under ``base_dir``."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None) -> None:
        self.base_dir = base_dir
        self._run_storage = SqliteRunStorage.from_local(self._runs_dir)
        self._event_log_storage = SqliteEventLogStorage(self._event_logs_dir)
        self._schedule_storage = SqliteScheduleStorage.from_local(self._schedules_dir)
        self._inst_data = inst_data
        DagsterStorage.__init__(self)

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData | None, config_value: Any
    ) -> SqliteStorage:
        return cls.from_local(inst_data=inst_data, **config_value)

    @property
    def _runs_dir(self) -> str:
        return sqlite_storage._runs_directory(self.base_dir)

    @property
    def _event_logs_dir(self) -> str:
        return sqlite_storage._event_logs_directory(self.base_dir)

    @property
    def _schedules_dir(self) -> str:
        return sqlite_storage._schedule_directory(self.base_dir)

    @property
    def run_storage_data(self) -> ConfigurableClassData:
        return _data(SqliteRunStorage, self._runs_dir)

    @property
    def event_storage_data(self) -> ConfigurableClassData:
        return _data(SqliteEventLogStorage, self._event_logs_dir)

    @property
    def schedule_storage_data(self) -> ConfigurableClassData:
        return _data(SqliteScheduleStorage, self._schedules_dir)


class Instance(DagsterInstance):
    """Dagster's instance, whose default storage is :class:`SqliteStorage` under the instance's
    home (where Dagster's default puts its own). Named in ``dagster.yaml`` as::

        instance_class:
          module: pipelines.sqlite_storage
          class: Instance

    The default is computed from the home the instance is opened at (``DAGSTER_HOME``, or the
    folder given to ``DagsterInstance.from_config``), so a copied or moved home reads its own
    files. A ``storage:`` section (Postgres, for the distributed set-up) still replaces it.
    """

    @classmethod
    def config_schema(cls) -> dict[str, Any]:
        return {}

    @staticmethod
    def config_defaults(base_dir: str) -> Mapping[str, ConfigurableClassData | None]:
        return {**InstanceRef.config_defaults(base_dir),
                "storage": _data(SqliteStorage, base_dir)}
