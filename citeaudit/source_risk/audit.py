"""One date × codebook of the source-risk audit: read inputs, validate, resolve, score.

Inputs: every line of ``<raw>/annotations/source_risk/**/*.jsonl`` whose answer is of the date
(``lines.dated_batches``, streamed in blocks), the date's ``answers`` and ``citations`` tables
and, when the alignment asset has written it, ``citation_captures`` (absent → the source
snapshot digest binds the record's URL and says so in its origin).

Memory stays bounded whatever the number of records: lines are validated batch by batch into
a DuckDB database file in a temporary folder (with a memory limit, spilling to that folder),
and the four tables go to parquet by row groups (``write``), never held whole in Python.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from citeaudit import duck, parquet_io, storage
from citeaudit.codebook import Codebook
from citeaudit.source_risk import contract, endpoint, lines, validate
from citeaudit.source_risk.digests import sha256_column


@dataclass(frozen=True)
class AuditResult:
    """The four tables of one partition, and whether aligned captures were used."""

    records: pa.Table
    rejected: pa.Table
    endpoints: pa.Table
    claim_ledger: pa.Table
    source_snapshots: str


def answer_dates(derived: Path) -> pa.Table:
    """Answer id → observation date (lines.DATES_SCHEMA), over every ``answers`` partition on
    disk; an id found on several dates keeps the latest."""
    files = sorted((storage.path(derived) / "answers").glob(
        f"observation_date=*/{parquet_io.DATA_FILE}"))
    parts = []
    for f in files:
        ids = parquet_io.read_table(f, columns=["answer_id"]).column(0)
        parts.append(pa.table({"answer_id": ids.cast(pa.string()), "observation_date": pa.repeat(
            pa.scalar(f.parent.name.split("=", 1)[1], pa.string()), len(ids))}))
    if not parts:
        return lines.DATES_SCHEMA.empty_table()
    table = pa.concat_tables(parts).filter(pc.is_valid(pc.field("answer_id")))
    out = table.group_by("answer_id").aggregate([("observation_date", "max")])
    return out.rename_columns(["answer_id", "observation_date"]).cast(lines.DATES_SCHEMA)


def answer_context(con, answers: pa.Table | None) -> pa.Table | None:
    """ANSWERS_SCHEMA rows from an ``answers`` table (texts hashed with hashlib)."""
    if answers is None:
        return None
    con.register("sr_answer_rows", answers)
    ctx = duck.query(con, "source_risk/select_answer_context")
    return pa.table({
        "answer_id": ctx.column("answer_id"), "query_id": ctx.column("query_id"),
        "query_sha256": sha256_column(ctx.column("query_text")),
        "answer_text": ctx.column("answer_text"),
        "answer_sha256": sha256_column(ctx.column("answer_text")),
        "observed_at": ctx.column("observed_at"),
    }, schema=validate.ANSWERS_SCHEMA)


CAPTURE_COLUMNS = pa.schema([("citation_id", pa.string()), ("canonical_key", pa.string()),
                             ("capture_time", pa.timestamp("us", tz="UTC")),
                             ("payload_sha256", pa.string())])


def source_context(con, citations: pa.Table | None, captures: pa.Table | None,
                   book: Codebook) -> pa.Table | None:
    """SOURCES_SCHEMA rows: rank per cited URL, aligned capture digest when available."""
    if citations is None:
        return None
    con.register("sr_citation_rows", citations)
    if captures is not None and set(CAPTURE_COLUMNS.names) <= set(captures.column_names):
        cap = captures.select(CAPTURE_COLUMNS.names)
        cap = cap.set_column(2, "capture_time",
                             pc.cast(cap.column("capture_time"), CAPTURE_COLUMNS.field(2).type))
    else:
        cap = CAPTURE_COLUMNS.empty_table()
    con.register("sr_capture_rows", cap)
    ctx = duck.query(con, "source_risk/select_source_context").cast(validate.SOURCES_SCHEMA)
    canon = [c if c is not None else canonical_url(u, book) for u, c in zip(
        ctx.column("source_url").to_pylist(), ctx.column("canonical_url").to_pylist(),
        strict=True)]
    return ctx.set_column(2, "canonical_url", pa.array(canon, pa.string()))


def canonical_url(url: str, book: Codebook) -> str:
    """Lower-case scheme and host, no default port, fragment or tracking parameters."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    try:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").lower()
        port = parts.port
    except ValueError:
        return url
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    netloc = host if port in (None, default) else f"{host}:{port}"
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                       if not book.is_tracking_param(k)])
    return urlunsplit((parts.scheme.lower(), netloc, parts.path or "/", query, ""))


def prior_files(derived: Path, date: str, version: str) -> list[Path]:
    """Ledger files of earlier dates under the same codebook (parents of later revisions)."""
    base = storage.path(derived) / "source_risk_records"
    return [p for p in sorted(base.glob(f"observation_date=*/codebook={version}/data.parquet"))
            if p.parent.parent.name.split("=", 1)[1] < date]


TABLES = ("source_risk_records", "rejected_records", "omission_endpoints",
          "source_risk_claim_ledger")
ROW_GROUP = 65_536
# The ledger and the rejections carry the canonical JSON and the raw line (~2.3 KB a row): a
# row group of them is held, copied and encoded whole before it is written, so they go out in
# smaller groups (a 65,536-row group made the peak RSS of a 1M-record run).
WIDE_ROW_GROUP = 16_384
WIDE_TABLES = ("source_risk_records", "rejected_records")
MEMORY_LIMIT = "300MB"
# The endpoint and claim-ledger steps aggregate lists per claim, which DuckDB cannot spill; by
# then the inputs of validation are released, so they get more of the same budget.
AUDIT_MEMORY_LIMIT = "350MB"
# The claim ledger's lists (two 64-character digests per tuple, gathered per claim) cannot
# spill: at 1,000,000 records (250,000 claims) 350 MB ran out of memory, so that step alone
# gets back the 450 MB every 1M run had before the limit was lowered.
CLAIM_LEDGER_MEMORY_LIMIT = "450MB"
# The Arrow tables validation registered, released before the audit steps.
VALIDATION_VIEWS = ("sr_answers", "sr_sources", "sr_answer_rows", "sr_citation_rows",
                    "sr_capture_rows", "sr_answer_dates", "sr_line_batch", "sr_line_ids",
                    "sr_lines", "sr_content_hashes", "sr_tuple_hashes", "sr_record_hashes",
                    "sr_line_canon", "sr_candidates")
STORE = "sr_store"  # the database file the key table and the lineage live in


@dataclass
class Written:
    """The four parquet files of one partition (by asset name) and what they hold."""

    paths: dict[str, Path]
    rows: dict[str, int] = field(default_factory=dict)
    source_snapshots: str = "record_url"
    lines: int = 0
    # seconds per phase: read (lines and dating), the ledger's steps, then each write; wall
    # and CPU (every thread of the process)
    seconds: dict[str, float] = field(default_factory=dict)
    cpu_seconds: dict[str, float] = field(default_factory=dict)


def stream_parquet(reader: pa.RecordBatchReader, path: Path,
                   schema: pa.Schema | None = None, rows: int = ROW_GROUP) -> int:
    """Write record batches to ``path`` in row groups of exactly ``rows`` rows (never
    gathered whole; the bytes do not depend on how DuckDB chunked them); rows written."""
    target = schema or reader.schema
    writer = parquet_io.RowGroupWriter(path, target, rows)
    try:
        for batch in reader:
            writer.write(batch.cast(target) if schema else batch)
    finally:
        writer.close()
    return writer.rows


def work_connection(folder: Path):
    """A DuckDB connection whose joins and sorts spill to ``folder`` past a memory limit, with
    a database file there (``STORE``) for the tables that grow with the run."""
    con = duck.connect(isolated=True)  # attaches its store, sets limits
    duck.spill_to_disk(con, MEMORY_LIMIT, folder / "spill")
    con.execute(f"ATTACH $path AS {STORE}", {"path": str(folder / "store.duckdb")})
    con.execute("SET search_path = $p", {"p": f"memory.main,{STORE}.main"})
    return con


ANSWER_COLUMNS = ("answer_id", "query_id", "query_text", "answer_text", "observed_at")


def _columns(derived: Path, asset: str, part: dict[str, str],
             columns: tuple[str, ...]) -> pa.Table | None:
    """Only ``columns`` of an optional partition (the rest of a wide table is never read)."""
    path = parquet_io.partition_dir(storage.path(derived), asset, part) / parquet_io.DATA_FILE
    return parquet_io.read_table(path, columns=list(columns)) if storage.is_file(path) else None


def run_into(raw: Path, derived: Path, date: str, book: Codebook, out: dict[str, Path],
             work: Path, block_bytes: int = lines.BLOCK_BYTES,
             progress: Callable[[int], None] | None = None) -> Written:
    """Validate the date's lines, resolve the current tuples and write the four tables to
    ``out`` (asset name → file), using ``work`` (an empty folder) for DuckDB's database.
    ``progress`` is told the number of lines validated so far after every batch."""
    con = work_connection(work)
    part = {"observation_date": date}
    read = parquet_io.read_optional
    captures = read(derived, "citation_captures", {**part, "codebook": book.version})
    if captures is None:
        captures = read(derived, "citation_captures", part)
    mode = "aligned_capture" if captures is not None else "record_url"
    settings = validate.Settings(book.priority_weights, tuple(sorted(book.source_roles)), mode)
    prior = prior_files(derived, date, book.version)
    ledger = validate.Ledger(
        settings,
        answers=answer_context(con, _columns(derived, "answers", part, ANSWER_COLUMNS)),
        sources=source_context(con, read(derived, "citations", part), captures, book),
        prior=con.read_parquet([str(p) for p in prior]).select(
            *validate.PRIOR_SCHEMA.names) if prior else None,
        con=con,
        work=work / "ledger",
        store=STORE,
    )
    batches = lines.dated_batches(raw, date, answer_dates(derived), con, block_bytes)
    seconds, cpu_seconds = {"read": 0.0}, {"read": 0.0}
    while True:
        # this thread's CPU: batches are validated by worker threads meanwhile
        start, cpu = time.perf_counter(), time.thread_time()
        batch = next(batches, None)
        seconds["read"] += time.perf_counter() - start
        cpu_seconds["read"] += time.thread_time() - cpu
        if batch is None:
            break
        ledger.add(batch)
        if progress is not None:
            progress(ledger.lines)
    ledger.finish()
    seconds.update(ledger.seconds)
    cpu_seconds.update(ledger.cpu_seconds)
    written = Written(dict(out), source_snapshots=mode, lines=ledger.lines, seconds=seconds,
                      cpu_seconds=cpu_seconds)
    rows = written.rows

    def timed(step: str, make, path: Path, schema: pa.Schema | None = None) -> None:
        start, cpu = time.perf_counter(), time.process_time()
        group = WIDE_ROW_GROUP if step in WIDE_TABLES else ROW_GROUP
        rows[step] = stream_parquet(make(), path, schema, group)
        seconds[f"write_{step}"] = time.perf_counter() - start
        cpu_seconds[f"write_{step}"] = time.process_time() - cpu

    timed("source_risk_records", ledger.records, out["source_risk_records"])
    timed("rejected_records", ledger.rejected, out["rejected_records"], contract.REJECTED_SCHEMA)
    ledger.release()
    for view in VALIDATION_VIEWS:
        con.unregister(view)
    del captures, ledger
    con.execute("SET memory_limit = $m", {"m": AUDIT_MEMORY_LIMIT})
    con.read_parquet(str(out["source_risk_records"])).select(
        *endpoint.ENDPOINT_INPUTS).create_view("sr_ledger", replace=True)
    timed("omission_endpoints",
          lambda: endpoint.endpoint_relation(con, book).to_arrow_reader(ROW_GROUP),
          out["omission_endpoints"])
    con.read_parquet(str(out["omission_endpoints"])).create_view("sr_endpoints", replace=True)
    con.execute("SET memory_limit = $m", {"m": CLAIM_LEDGER_MEMORY_LIMIT})
    timed("source_risk_claim_ledger",
          lambda: validate.relation(
              con, "source_risk/summarize_claim_ledger").to_arrow_reader(ROW_GROUP),
          out["source_risk_claim_ledger"])
    con.close()
    return written


def write(raw: Path, derived: Path, date: str, book: Codebook,
          progress: Callable[[int], None] | None = None) -> Written:
    """The four partitions of (date, codebook), each replaced atomically: a temporary file
    renamed into place, or on object storage a local file uploaded as one object."""
    part = {"observation_date": date, "codebook": book.version}
    root = storage.path(derived)
    remote = storage.is_remote(root)
    finals = {name: parquet_io.partition_dir(root, name, part) / parquet_io.DATA_FILE
              for name in TABLES}
    with tempfile.TemporaryDirectory(prefix="citeaudit-source-risk-") as work:
        if remote:
            (Path(work) / "out").mkdir()
            temps = {name: Path(work) / "out" / f"{name}.parquet" for name in TABLES}
        else:
            for final in finals.values():
                final.parent.mkdir(parents=True, exist_ok=True)
                parquet_io.remove_dead_temps(final)
            temps = {name: parquet_io.temp_name(path) for name, path in finals.items()}
        try:
            written = run_into(raw, derived, date, book, temps, Path(work), progress=progress)
            if remote:
                for name, tmp in temps.items():
                    storage.upload_file(tmp, finals[name])
            else:
                for tmp in temps.values():
                    with open(tmp, "rb") as fh:
                        os.fsync(fh.fileno())
                for name, tmp in temps.items():
                    os.replace(tmp, finals[name])
        finally:
            for tmp in temps.values():
                tmp.unlink(missing_ok=True)
    written.paths = finals
    return written


def audit(raw: Path, derived: Path, date: str, book: Codebook) -> AuditResult:
    """Validate the date's source-risk lines and resolve the current tuples under ``book``,
    returning the four tables (the same streaming run as :func:`write`, read back)."""
    with tempfile.TemporaryDirectory(prefix="citeaudit-source-risk-") as work:
        folder = Path(work)
        out = {name: folder / f"{name}.parquet" for name in TABLES}
        (folder / "db").mkdir()
        written = run_into(raw, derived, date, book, out, folder / "db")
        tables = {name: pq.read_table(path) for name, path in out.items()}
    return AuditResult(tables["source_risk_records"], tables["rejected_records"],
                       tables["omission_endpoints"], tables["source_risk_claim_ledger"],
                       written.source_snapshots)
