"""Validate source-risk lines in the source-risk audit specification's execution order and split
them into ledger rows and rejections.

Lines come in batches (:class:`Ledger`: ``add`` one batch at a time, ``finish`` once); every
row-wise step runs in DuckDB SQL over the batch (``sql/source_risk/``); Python only hashes
(hashlib over Arrow buffers, called by DuckDB as the ``sr_sha256`` function, one vector at a
time) and hands Arrow tables between steps. Steps 1-3 run as one statement
(``batch_statement``: one pass, only its result is materialized):

1. ``type_record_lines``: parse, keep JSON types ("U", 0, null, missing key stay apart), join
   the answers (answer and query snapshot) and, when available, aligned captures;
2. ``seal_tuples`` (snapshot content digests, tuple canonical JSON) → ``seal_records`` (tuple
   digest, record canonical JSON) → the record digest;
3. ``check_records``: the first defect in order (fields and hashes → predicates and evidence →
   dimensions and weights);
4. the batch leaves three things: the lines that passed, as ledger rows
   (``select_sealed_records``), and the rejected lines (``select_checked_rejections``), each
   in an Arrow IPC file of the batch in the work folder, and a small in-memory key table of the
   lines that passed (``select_line_keys``: 32-byte record, tuple and line digests and the
   parent reference);
5. ``finish``: lineage over the key table of every batch (``link_revisions``: duplicates,
   parents anywhere in the input or in earlier ledger partitions, in either order); then the
   ledger (``select_records``) and the rejections (``select_rejected_records``) are read out
   batch file by batch file, in file and line order, to be streamed to parquet or gathered.

With ``workers`` > 1, steps 1-4 of a batch run in a worker thread on a cursor of its own
(that many batches at once, one DuckDB thread each); the key tables are kept in batch order,
so nothing depends on which batch finished first.

The batch size changes nothing but memory: one batch or many give the same rows (a test).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
import threading
import time
from collections import defaultdict, deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
from duckdb import sqltypes

from citeaudit import duck
from citeaudit.source_risk import contract
from citeaudit.source_risk.digests import canonical_json, sha256_column, sha256_hex
from citeaudit.source_risk.lines import LINES_SCHEMA

ANSWERS_SCHEMA = pa.schema([
    ("answer_id", pa.string()), ("query_id", pa.string()), ("query_sha256", pa.string()),
    ("answer_text", pa.string()), ("answer_sha256", pa.string()), ("observed_at", pa.string()),
])
SOURCES_SCHEMA = pa.schema([
    ("answer_id", pa.string()), ("source_url", pa.string()), ("canonical_url", pa.string()),
    ("rank", pa.int32()), ("payload_sha256", pa.string()), ("capture_time", pa.string()),
])
PRIOR_SCHEMA = pa.schema([
    ("record_digest", pa.string()), ("tuple_digest", pa.string()),
    ("line_sha256", pa.string()), ("line_canonical_sha256", pa.string()),
])
__all__ = ["ANSWERS_SCHEMA", "LINES_SCHEMA", "PRIOR_SCHEMA", "SOURCES_SCHEMA", "Ledger",
           "Settings", "Validated", "validate"]

# The steps of one batch: each SQL file reads the one before by this name. They run as one
# statement (``batch_statement``), so DuckDB streams a batch through them in one pass, on one
# thread (a batch is one Arrow chunk, which DuckDB scans on one thread anyway: a second
# DuckDB thread only added scheduling, about a quarter more CPU a line, measured), and
# materializes only the last (``sr_checked``, in the lines' order: checked, and sorted only
# when not); the hashes are taken inside it (``sr_sha256``).
BATCH_STEPS = (("sr_typed", "type_record_lines"), ("sr_sealed_tuples", "seal_tuples"),
               ("sr_sealed_records", "seal_records"))
BATCH_LAST = "check_records"
# The table one batch builds and the next batch replaces: a temporary table, private to the
# connection (cursor) that validates the batch, so batches can be validated side by side.
BATCH_TABLES = ("sr_checked",)
# How many batches are validated at once unless the caller says otherwise, each on its own
# DuckDB cursor and one DuckDB thread (a batch is one Arrow chunk that DuckDB scans on one
# thread; DuckDB releases the GIL while it runs a statement, so a second worker can use a free
# core). One: on a shared 2-vCPU machine two workers measured 1.14x the CPU and 1.11x the
# wall of one (whole 100k-record benchmark process, interleaved pairs, load 5), with ~75 MiB
# more peak RSS; a machine with idle cores may choose more (``Ledger(workers=...)``).
WORKERS = 1
SHA256_FUNCTION = "sr_sha256"
# The tables a run accumulates over its batches (the ledger rows go to parquet files).
RUN_TABLES = ("sr_line_keys", "sr_digests", "sr_linked")
BATCH_ROWS = 65_536  # rows per record batch read back from a batch file


@dataclass(frozen=True)
class Settings:
    """What a validation run needs from the codebook and the pipeline."""

    weights: dict[str, float]
    roles: tuple[str, ...]
    source_snapshots: str = "record_url"

    def params(self) -> dict:
        """The SQL parameters: sorted weights, this run's pipeline identity, the roles."""
        config = contract.pipeline_config(self.source_snapshots)
        keys = sorted(self.weights)
        return {
            "weight_keys": keys,
            "weight_values": [float(self.weights[k]) for k in keys],
            "pipeline_name": contract.PIPELINE_NAME,
            "pipeline_version": contract.CONTRACT_VERSION,
            "pipeline_config": sha256_hex(canonical_json(config).decode()),
            "roles": list(self.roles),
        }


@dataclass(frozen=True)
class Validated:
    """Accepted ledger rows and rejected lines, and every line's digests.

    ``digests`` (file, line, tuple_digest, record_digest) holds the digests computed for every
    typed line, accepted or not: sealing a record is validating it and keeping these.
    """

    records: pa.Table
    rejected: pa.Table
    digests: pa.Table


def relation(con: duckdb.DuckDBPyConnection, name: str,
             params: dict | None = None) -> duckdb.DuckDBPyRelation:
    """A project SQL file as a lazy DuckDB relation (streamed by the caller, never drained)."""
    text = duck.sql_text(name)
    used = {k: v for k, v in (params or {}).items() if f"${k}" in text}
    return con.sql(text, params=used or None)


def batch_statement() -> str:
    """The steps of BATCH_STEPS and BATCH_LAST as one statement: each step a common table
    expression named as the next step reads it (every file stays one statement of its own)."""
    steps = [f"{name} AS (\n{duck.sql_text('source_risk/' + sql)})"
             for name, sql in BATCH_STEPS]
    last = duck.sql_text(f"source_risk/{BATCH_LAST}")
    found = re.search(r"^WITH\s", last, flags=re.MULTILINE)
    if found is None:
        raise ValueError(f"sql/source_risk/{BATCH_LAST}.sql must start with WITH")
    return "WITH " + ",\n".join(steps) + ",\n" + last[found.end():]


def _sha256_function(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    """``sr_sha256`` for DuckDB (one Arrow vector in, hex digests out; NULL stays NULL)."""
    return sha256_column(column)


def register_sha256(con: duckdb.DuckDBPyConnection) -> None:
    """Give ``con`` the ``sr_sha256(VARCHAR) -> VARCHAR`` function the batch steps call."""
    with suppress(duckdb.Error):  # not registered on this connection yet
        con.remove_function(SHA256_FUNCTION)
    con.create_function(SHA256_FUNCTION, _sha256_function, [sqltypes.VARCHAR],
                        sqltypes.VARCHAR, type="arrow", null_handling="special",
                        side_effects=False)


def connection_setup(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """The per-connection settings of ``con`` a cursor must repeat to read the same names the
    same way (its search path and time zone): (setting, value) pairs."""
    return [(name, con.sql(f"SELECT current_setting('{name}')").fetchall()[0][0])
            for name in ("search_path", "TimeZone")]


def in_line_order(keys: pa.Table) -> bool:
    """Whether the rows of ``keys`` (its ``file`` and ``line`` columns) are in (file, line)
    order, strictly increasing."""
    if keys.num_rows < 2:
        return True
    files, lines = keys.column("file"), keys.column("line")
    head_f, tail_f = files.slice(0, len(files) - 1), files.slice(1)
    ordered = pc.or_(pc.less(head_f, tail_f), pc.and_(
        pc.equal(head_f, tail_f), pc.less(lines.slice(0, len(lines) - 1), lines.slice(1))))
    return bool(pc.all(ordered).as_py())


def write_spool(table: pa.Table, path: Path) -> None:
    """One batch's rows as an Arrow IPC file of the work folder (no encoding or compression:
    it is read back once, memory-mapped, by the same run)."""
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def read_spool(path: Path) -> pa.Table:
    """A batch file of :func:`write_spool`, memory-mapped (its pages are not copied)."""
    with pa.memory_map(str(path)) as source:
        return pa.ipc.open_file(source).read_all()


def empty(schema: pa.Schema) -> pa.Table:
    """An empty input table (a context the caller does not have)."""
    return schema.empty_table()


@dataclass
class BatchOut:
    """What validating one batch leaves for the run: its key table (and digests), the seconds
    it took per step (wall, and CPU of the thread that ran it)."""

    index: int
    keys: pa.Table
    digests: pa.Table | None
    seconds: dict[str, float] = field(default_factory=dict)
    cpu_seconds: dict[str, float] = field(default_factory=dict)


class Ledger:
    """One validation run: batches of lines in, the ledger and the rejections out.

    ``answers``/``sources``/``prior`` follow ANSWERS_SCHEMA/SOURCES_SCHEMA/PRIOR_SCHEMA and may
    be omitted (records must then carry their snapshots, as the conformance fixtures do). The
    accumulated rows live in DuckDB tables of ``con`` (give it a database file and a memory
    limit to keep a large run's joins and sorts out of memory; ``store``, the name of a
    database file attached to it, then holds the key table and the lineage, which DuckDB can
    evict from memory there); the batch files go to ``work`` (a folder of this run's own, a
    temporary one by default, removed by :meth:`close`). ``keep_digests`` also keeps every
    line's digests.

    ``workers`` batches are validated at once (each in a thread with its own cursor of
    ``con``, DuckDB on one thread); their key tables are kept in batch order, so the run's
    tables and files do not depend on which batch finished first. ``workers=1`` validates each
    batch in the caller's thread on ``con``.
    """

    def __init__(self, settings: Settings, answers: pa.Table | None = None,
                 sources: pa.Table | None = None,
                 prior: pa.Table | duckdb.DuckDBPyRelation | None = None,
                 con: duckdb.DuckDBPyConnection | None = None, keep_digests: bool = False,
                 work: Path | None = None, store: str | None = None, workers: int = WORKERS):
        self.con = con or duck.connect(isolated=True)  # threads, cursors, a function
        self.store = store
        self._own_work = work is None
        self.work = Path(tempfile.mkdtemp(prefix="citeaudit-ledger-")) if work is None \
            else Path(work)
        for sub in ("spool", "rejects"):
            (self.work / sub).mkdir(parents=True, exist_ok=True)
        self.params = settings.params()
        self.keep_digests = keep_digests
        self.workers = max(1, int(workers))
        self.batches = 0
        self.lines = 0
        self.finished = False
        # wall and CPU seconds per step over every batch: the benchmark's per-phase figures
        # (a batch's steps: the CPU of the thread that ran them; DuckDB runs them on it)
        self.seconds: dict[str, float] = defaultdict(float)
        self.cpu_seconds: dict[str, float] = defaultdict(float)
        self._answers = answers if answers is not None else empty(ANSWERS_SCHEMA)
        self._sources = sources if sources is not None else empty(SOURCES_SCHEMA)
        self._setup = connection_setup(self.con)
        self._threads: int | None = None  # DuckDB's setting, restored after the batches
        self._pool: ThreadPoolExecutor | None = None
        self._pending: deque[Future[BatchOut]] = deque()
        self._local = threading.local()
        self._cursors: list[duckdb.DuckDBPyConnection] = []
        self._cursors_lock = threading.Lock()
        for table in BATCH_TABLES:
            self.con.execute(f"DROP TABLE IF EXISTS temp.main.{table}")
        for table in RUN_TABLES:
            self.con.execute(f"DROP TABLE IF EXISTS {self._run_table(table)}")
        register_sha256(self.con)
        self._batch_views(self.con)
        if isinstance(prior, duckdb.DuckDBPyRelation):
            prior.create_view("sr_prior", replace=True)
        else:
            self.con.register("sr_prior", prior if prior is not None else empty(PRIOR_SCHEMA))

    def _batch_views(self, con: duckdb.DuckDBPyConnection) -> None:
        """What a batch statement reads besides its lines, on ``con`` (``sr_sha256``, made
        on the ledger's connection, is in the database's catalog: its cursors see it)."""
        con.register("sr_answers", self._answers)
        con.register("sr_sources", self._sources)

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        """This worker thread's cursor of ``con`` (same database, its own temporary tables
        and views), made on first use."""
        cur = getattr(self._local, "con", None)
        if cur is None:
            cur = self.con.cursor()
            for name, value in self._setup:
                cur.execute(f"SET {name} = $v", {"v": value})
            self._batch_views(cur)
            self._local.con = cur
            with self._cursors_lock:
                self._cursors.append(cur)
        return cur

    def _run_table(self, table: str) -> str:
        """The qualified name of a table the run accumulates (in ``store`` when given)."""
        return f"{self.store or 'memory'}.main.{table}"

    def _append(self, table: str, rows: pa.Table, first: bool) -> None:
        """Add one batch's rows to a run table (made by the ``first`` batch)."""
        view = f"{table}_batch"
        self.con.register(view, rows)
        try:
            if first:
                self.con.execute(f"CREATE TABLE {self._run_table(table)} AS FROM {view}")
            else:
                self.con.execute(f"INSERT INTO {self._run_table(table)} FROM {view}")
        finally:
            self.con.unregister(view)

    def _one_thread(self) -> None:
        """DuckDB on one thread while batches are validated (restored by :meth:`_restore`)."""
        if self._threads is None:
            self._threads = self.con.sql("SELECT current_setting('threads')").fetchall()[0][0]
            self.con.execute("SET threads = 1")

    def _restore(self) -> None:
        """DuckDB's threads setting as it was before the first batch."""
        if self._threads is not None:
            self.con.execute("SET threads = $n", {"n": self._threads})
            self._threads = None

    def add(self, lines: pa.Table) -> None:
        """Type, seal and check one batch of lines (file, line, raw) and keep what it yields
        (with ``workers`` > 1 the batch is validated beside the ones before; its keys are kept
        in batch order by a later ``add`` or by ``finish``)."""
        if self.finished:
            raise RuntimeError("this ledger is finished; start a new one")
        index = self.batches
        self.batches += 1
        self.lines += lines.num_rows
        self._one_thread()
        if self.workers == 1:
            self._keep(self._validate_batch(self.con, index, lines))
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="sr-validate")
        self._pending.append(self._pool.submit(self._in_worker, index, lines))
        # one more batch than workers in flight: the caller reads the next while they run
        while len(self._pending) > self.workers:
            self._keep(self._pending.popleft().result())

    def _drain(self) -> None:
        """Keep every batch still being validated, in batch order."""
        while self._pending:
            self._keep(self._pending.popleft().result())

    def _in_worker(self, index: int, lines: pa.Table) -> BatchOut:
        """One batch validated in a worker thread, on that thread's cursor."""
        return self._validate_batch(self._cursor(), index, lines)

    def _validate_batch(self, con: duckdb.DuckDBPyConnection, index: int,
                        lines: pa.Table) -> BatchOut:
        """Validate one batch on ``con``: its ledger rows and rejections to the batch files,
        its key table (and digests) returned for :meth:`_keep`."""
        seconds: dict[str, float] = defaultdict(float)
        cpu_seconds: dict[str, float] = defaultdict(float)

        @contextmanager
        def timed(step: str) -> Iterator[None]:
            start, cpu = time.perf_counter(), time.thread_time()
            try:
                yield
            finally:
                seconds[step] += time.perf_counter() - start
                cpu_seconds[step] += time.thread_time() - cpu

        with timed("hash_lines"):
            raw = lines.column("raw")
            con.register("sr_lines", pa.table({
                "file": lines.column("file"), "line": lines.column("line"), "raw": raw,
                "line_sha256": sha256_column(raw)}))
        with timed("validate"):
            text = batch_statement()
            used = {k: v for k, v in self.params.items() if f"${k}" in text}
            for table in BATCH_TABLES:
                con.execute(f"DROP TABLE IF EXISTS temp.main.{table}")
            con.execute(f"CREATE TEMP TABLE sr_checked AS\n{text}", used)
            # one thread keeps the lines' order; checked on the two key columns, sorted if not
            keys = con.sql("SELECT file, line FROM sr_checked").to_arrow_table()
            if not in_line_order(keys):
                con.execute("CREATE TEMP TABLE sr_checked_sorted AS\n"
                            + duck.sql_text("source_risk/sort_checked"))
                con.execute("DROP TABLE temp.main.sr_checked")
                con.execute("ALTER TABLE temp.main.sr_checked_sorted RENAME TO sr_checked")
        with timed("keep"):
            name = f"{index:06d}.arrow"
            for sub, sql in (("spool", "select_sealed_records"),
                             ("rejects", "select_checked_rejections")):
                write_spool(relation(con, f"source_risk/{sql}").to_arrow_table(),
                            self.work / sub / name)
            line_keys = relation(con, "source_risk/select_line_keys",
                                 {"batch": index}).to_arrow_table()
            digests = relation(con, "source_risk/select_line_digests").to_arrow_table() \
                if self.keep_digests else None
            con.execute("DROP TABLE temp.main.sr_checked")
            con.unregister("sr_lines")
        return BatchOut(index, line_keys, digests, seconds, cpu_seconds)

    def _keep(self, out: BatchOut) -> None:
        """A validated batch's keys (and digests) added to the run's tables, in batch order."""
        start, cpu = time.perf_counter(), time.thread_time()
        self._append("sr_line_keys", out.keys, out.index == 0)
        if out.digests is not None:
            self._append("sr_digests", out.digests, out.index == 0)
        for step, value in out.seconds.items():
            self.seconds[step] += value
        for step, value in out.cpu_seconds.items():
            self.cpu_seconds[step] += value
        self.seconds["keep"] += time.perf_counter() - start
        self.cpu_seconds["keep"] += time.thread_time() - cpu

    def finish(self) -> None:
        """Resolve lineage over every batch (and the prior ledger); run once, after ``add``."""
        if self.finished:
            return
        if self.batches == 0:
            self.add(LINES_SCHEMA.empty_table())
        self._drain()
        self._stop_workers()
        self._restore()
        start, cpu = time.perf_counter(), time.process_time()
        self._link()
        self.seconds["lineage"] += time.perf_counter() - start
        self.cpu_seconds["lineage"] += time.process_time() - cpu
        self.finished = True

    def _stop_workers(self) -> None:
        """Stop the worker threads and close their cursors (and their temporary tables)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._pending.clear()
        for cur in self._cursors:
            cur.close()
        self._cursors.clear()

    def _link(self) -> None:
        con = self.con
        cands = duck.query(con, "source_risk/select_parent_candidates")
        canon = []
        if cands.num_rows:
            con.register("sr_candidates", cands)
            con.register("sr_spool", ds.dataset([str(p) for p in self._parts("spool")],
                                                format="arrow"))
            lines = duck.query(con, "source_risk/select_candidate_lines")
            canon = [hashlib.sha256(canonical_json(json.loads(r))).hexdigest()
                     for r in lines.column("raw").to_pylist()]
            cands = lines.select(["file", "line"])
        con.register("sr_line_canon", pa.table({
            "file": cands.column("file"), "line": cands.column("line"),
            "line_canonical_sha256": pa.array(canon, type=pa.string())}))
        relation(con, "source_risk/link_revisions").create(self._run_table("sr_linked"))

    def _parts(self, sub: str) -> list[Path]:
        return [self.work / sub / f"{i:06d}.arrow" for i in range(self.batches)]

    def _beside_lineage(self, index: int, spool: pa.Table) -> pa.Table:
        """Batch ``index``'s ledger rows with their lineage outcome (select_batch_lineage)
        put beside them by position: both are in file and line order, which is checked."""
        linked = relation(self.con, "source_risk/select_batch_lineage",
                          {"batch": index}).to_arrow_table()
        for key in ("file", "line"):
            if not spool.column(key).equals(linked.column(key).cast(spool.schema.field(key).type)):
                raise RuntimeError(f"batch {index}: ledger rows and lineage are not aligned "
                                   f"by {key}; the batch file is out of order")
        for column in linked.column_names[2:]:
            spool = spool.append_column(column, linked.column(column))
        return spool

    def _spooled(self, name: str, params: dict | None = None,
                 schema: pa.Schema | None = None) -> pa.RecordBatchReader:
        """A final SQL file run batch file by batch file (``sr_spool``, ``sr_rejects`` are one
        batch's files), as a reader of record batches in file and line order."""
        self.finish()
        parts = list(zip(self._parts("spool"), self._parts("rejects"), strict=True))

        def use(index: int) -> duckdb.DuckDBPyRelation:
            spool, rejects = parts[index]
            self.con.register("sr_spool", self._beside_lineage(index, read_spool(spool)))
            self.con.register("sr_rejects", read_spool(rejects))
            return relation(self.con, name, params)

        target = schema or use(0).limit(0).to_arrow_table().schema

        def batches() -> Iterator[pa.RecordBatch]:
            for index in range(len(parts)):
                for batch in use(index).to_arrow_reader(BATCH_ROWS):
                    yield batch.cast(target) if schema else batch

        return pa.RecordBatchReader.from_batches(target, batches())

    def records(self) -> pa.RecordBatchReader:
        """The ledger rows (``source_risk_records``), one per record digest, in line order."""
        return self._spooled("source_risk/select_records", {"gate": contract.VALIDATION_GATE})

    def rejected(self) -> pa.RecordBatchReader:
        """The rejected lines (``rejected_records``), in file and line order."""
        return self._spooled("source_risk/select_rejected_records",
                             schema=contract.REJECTED_SCHEMA)

    def digests(self) -> pa.Table:
        """Every typed line's (file, line, tuple_digest, record_digest); needs keep_digests."""
        self.finish()
        return self.con.sql("SELECT * FROM sr_digests ORDER BY file, line").to_arrow_table()

    def release(self) -> None:
        """Drop the tables the run accumulated (key table, digests, lineage) once the ledger
        and the rejections are read out: nothing reads them afterwards, and the audit steps
        after validation run under the same DuckDB memory limit."""
        for table in RUN_TABLES:
            self.con.execute(f"DROP TABLE IF EXISTS {self._run_table(table)}")

    def close(self) -> None:
        """Stop the workers, restore DuckDB's threads and remove the work folder when this
        ledger made it (the caller's is left alone)."""
        self._stop_workers()
        self._restore()
        if self._own_work:
            shutil.rmtree(self.work, ignore_errors=True)




def run(batches: Iterable[pa.Table], settings: Settings, **context) -> Ledger:
    """A finished :class:`Ledger` over batches of lines (``context``: as for Ledger)."""
    ledger = Ledger(settings, **context)
    for batch in batches:
        ledger.add(batch)
    ledger.finish()
    return ledger


def validate(
    lines: pa.Table,
    settings: Settings,
    answers: pa.Table | None = None,
    sources: pa.Table | None = None,
    prior: pa.Table | None = None,
    con: duckdb.DuckDBPyConnection | None = None,
    batch_rows: int | None = None,
    workers: int = WORKERS,
) -> Validated:
    """Type, seal and check lines (file, line, raw) in memory, in batches of ``batch_rows``
    (default: one batch) validated ``workers`` at a time, and return the ledger, the
    rejections and every line's digests."""
    size = batch_rows or max(1, lines.num_rows)
    batches = [lines.slice(i, size) for i in range(0, lines.num_rows, size)]
    ledger = run(batches, settings, answers=answers, sources=sources, prior=prior, con=con,
                 keep_digests=True, workers=workers)
    try:
        return Validated(ledger.records().read_all(), ledger.rejected().read_all(),
                         ledger.digests())
    finally:
        ledger.close()
