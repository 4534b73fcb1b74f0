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
    """An import finder that refuses ``pandas`` (see :func:`lean_process`)."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(
                "pandas is declined in a capture-only process (citeaudit.archive.capture."
                "fetch_log.lean_process)", name=name)


def lean_process() -> bool:
    """Set up a process that does nothing but capture (the ``archive`` command) to carry less
    memory: ``import pandas`` fails from here on. True when declined (pandas not imported yet).

    pyarrow (``pa.array`` of Python values) and DuckDB (registering an Arrow table) import
    pandas only to ask whether an object is a DataFrame, and carry on without it; the capture
    never makes one, yet that probe alone is about 50 MB of the command's peak RSS (measured
    on the loopback crawl benchmark, benchmarks/README.md). Never for the pipeline's own
    processes: they use pandas (the metrics)."""
    if "pandas" in sys.modules:
        return False
    if not any(isinstance(f, _NoPandas) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoPandas())
    return True


_NAMES = FETCH_LOG_SCHEMA.names


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
        # one tuple per row in the schema's column order (a dict per row weighed ~1.5 KB:
        # 6 MB of a 4,000-page crawl's peak)
        self.rows: list[tuple] = []
        self._lock = threading.Lock()
        self.journal = journal
        self._fh = None

    def add(self, **row) -> None:
        """Add one row (columns of :data:`FETCH_LOG_SCHEMA` by name; the others NULL)."""
        import json

        values = tuple(row.get(name) for name in _NAMES)
        with self._lock:
            self.rows.append(values)
            if self.journal is not None:
                if self._fh is None:
                    self.journal.parent.mkdir(parents=True, exist_ok=True)
                    self._fh = open(self.journal, "a", encoding="utf-8")  # noqa: SIM115
                full = dict(zip(_NAMES, values, strict=True)) | row
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
        """The rows as a ``fetch_log`` table, by cited URL, robots.txt rows after a page's,
        then hop, attempt and URL."""
        cited, purpose, hop, attempt, url = (_NAMES.index(n) for n in (
            "cited_url", "purpose", "hop", "attempt", "url"))
        rows = sorted(self.rows, key=lambda r: (
            r[cited] or "", r[purpose] == "robots", r[hop] or 0, r[attempt] or 0, r[url] or ""))
        columns = list(zip(*rows, strict=True)) if rows else [()] * len(_NAMES)
        return pa.Table.from_arrays(
            [pa.array(col, type=f.type) for col, f in zip(columns, FETCH_LOG_SCHEMA, strict=True)],
            schema=FETCH_LOG_SCHEMA)

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
