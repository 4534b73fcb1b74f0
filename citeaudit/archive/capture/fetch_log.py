"""The fetch log: one row per fetch attempt or refusal, whatever the source of the capture.

Every source (the live crawl, :mod:`citeaudit.archive.capture.crawl`; the archive source,
:mod:`citeaudit.archive.capture.from_archives`) adds its rows to a :class:`FetchLog` and returns
a :class:`CrawlResult`; :func:`write_log` keeps each crawl's rows beside the raw inputs and
:func:`read_logs` reads a date's back (the ``fetch_log`` table).
"""

from __future__ import annotations

import datetime as dt
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from citeaudit import parquet_io, storage

FETCH_LOG_SCHEMA = pa.schema([
    pa.field("cited_url", pa.string()),
    pa.field("canonical_key", pa.string()),
    pa.field("url", pa.string()),
    pa.field("purpose", pa.string()),
    pa.field("hop", pa.int32()),
    pa.field("attempt", pa.int32()),
    pa.field("requested_at", pa.timestamp("us", tz="UTC")),
    pa.field("elapsed_ms", pa.int64()),
    pa.field("outcome", pa.string(), nullable=False),
    pa.field("http_status", pa.int32()),
    pa.field("bytes", pa.int64()),
    pa.field("redirect_location", pa.string()),
    pa.field("ip_address", pa.string()),
    pa.field("record_type", pa.string()),
    pa.field("warc_file", pa.string()),
    pa.field("warc_offset", pa.int64()),
    pa.field("warc_length", pa.int64()),
    pa.field("detail", pa.string()),
])


class _NoPandas:
    """An import finder that refuses ``pandas`` (see :func:`decline_pandas`)."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(
                "pandas is declined in a capture process (citeaudit.archive.capture."
                "fetch_log.decline_pandas)", name=name)


def decline_pandas() -> bool:
    """Make ``import pandas`` fail in this process, unless it is already imported; True when
    declined.

    Why: pyarrow (``pa.array`` of Python values) and DuckDB (registering an Arrow table) import
    pandas only to ask whether an object is a DataFrame; both carry on without it. The capture
    never makes a DataFrame, yet that probe alone is about 50 MB of the ``archive`` command's
    peak RSS (a third of it). Only for a process that does nothing but capture (the
    ``archive`` command): the pipeline's own processes use pandas and never call this."""
    if "pandas" in sys.modules:
        return False
    if not any(isinstance(f, _NoPandas) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoPandas())
    return True


@dataclass
class CrawlResult:
    """The crawl's log rows and the WARC files it closed (relative to raw); ``journal`` the
    live crawl's :class:`FetchLog` whose journal the caller closes once the log is written."""

    log: pa.Table
    files: list[Path]
    journal: FetchLog | None = None


class FetchLog:
    """The rows of one crawl, added from many threads; :meth:`table` sorts them.

    With a ``journal`` path each row is also appended there as one JSON line, flushed, so a
    killed crawl's log survives (:mod:`citeaudit.archive.capture.resume`)."""

    def __init__(self, journal: Path | None = None) -> None:
        self.rows: list[dict] = []
        self._lock = threading.Lock()
        self.journal = journal
        self._fh = None

    def add(self, **row) -> None:
        import json

        full = dict.fromkeys(FETCH_LOG_SCHEMA.names) | row
        with self._lock:
            self.rows.append(full)
            if self.journal is not None:
                if self._fh is None:
                    self.journal.parent.mkdir(parents=True, exist_ok=True)
                    self._fh = open(self.journal, "a", encoding="utf-8")  # noqa: SIM115
                self._fh.write(json.dumps(full, default=str, ensure_ascii=False) + "\n")
                self._fh.flush()

    def close_journal(self) -> None:
        """Close and remove the journal (the log is written as parquet now)."""
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None
            if self.journal is not None:
                self.journal.unlink(missing_ok=True)

    def table(self) -> pa.Table:
        rows = sorted(self.rows, key=lambda r: (
            r["cited_url"] or "", r["purpose"] == "robots", r["hop"] or 0, r["attempt"] or 0,
            r["url"] or ""))
        return pa.Table.from_pylist(rows, FETCH_LOG_SCHEMA)


LOG_FOLDER = "fetch_logs"


def write_log(raw: Path, observation_date: str, log: pa.Table, now: dt.datetime) -> Path | None:
    """Keep one crawl's log beside the raw inputs (``raw/fetch_logs/<date>/<time>-<pid>.parquet``,
    temp file then rename): it is a record of what happened at crawl time, like the WARCs."""
    import os

    import pyarrow.parquet as pq

    if log.num_rows == 0:
        return None
    folder = storage.path(raw) / LOG_FOLDER / observation_date
    folder.mkdir(parents=True, exist_ok=True)
    stamp = max(now, dt.datetime.now(dt.UTC)).astimezone(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    path = folder / f"{stamp}-{os.getpid()}.parquet"
    n = 1
    while path.exists():  # two crawls in one microsecond of one process: keep both
        path = folder / f"{stamp}-{os.getpid()}-{n}.parquet"
        n += 1
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(log, tmp, compression="zstd")
    os.replace(tmp, path)
    return path


def read_logs(raw: Path, observation_date: str) -> pa.Table:
    """Every crawl log of one observation date, oldest crawl first."""

    folder = storage.path(raw) / LOG_FOLDER / observation_date
    files = sorted(folder.glob("*.parquet")) if folder.is_dir() else []
    if not files:
        return FETCH_LOG_SCHEMA.empty_table()
    return pa.concat_tables([parquet_io.read_table(f).cast(FETCH_LOG_SCHEMA) for f in files])
