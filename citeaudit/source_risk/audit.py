"""One date × codebook of the source-risk audit: read inputs, validate, resolve, score.

Inputs: every line of ``<raw>/annotations/source_risk/**/*.jsonl`` whose answer is of the date
(``layout.source_risk_lines``), the date's ``answers`` and ``citations`` tables and, when the
alignment asset has written it, ``citation_captures``
(absent → the source snapshot digest binds the record's URL and says so in its origin).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from citeaudit import duck, layout, parquet_io, storage
from citeaudit.codebook import Codebook
from citeaudit.source_risk import endpoint, validate
from citeaudit.source_risk.digests import sha256_column


@dataclass(frozen=True)
class AuditResult:
    """The four tables of one partition, and whether aligned captures were used."""

    records: pa.Table
    rejected: pa.Table
    endpoints: pa.Table
    claim_ledger: pa.Table
    source_snapshots: str


def answer_dates(derived: Path) -> dict[str, str]:
    """Answer id → observation date, over every ``answers`` partition on disk."""
    files = sorted((storage.path(derived) / "answers").glob(
        f"observation_date=*/{parquet_io.DATA_FILE}"))
    return {aid: f.parent.name.split("=", 1)[1] for f in files
            for aid in parquet_io.read_table(f, columns=["answer_id"]).column(0).to_pylist()}


def annotation_file(raw: Path, date: str) -> Path:
    return storage.path(raw) / "annotations" / "source_risk" / f"{date}.jsonl"


def read_lines(path: Path, name: str | None = None) -> pa.Table:
    """Non-blank lines of a JSONL file as (file, line, raw); invalid UTF-8 kept, replaced."""
    files, numbers, texts = [], [], []
    if path.is_file():
        label = name or path.name
        with path.open("rb") as fh:
            for n, data in enumerate(fh, 1):
                text = data.decode("utf-8", errors="replace").rstrip("\r\n")
                if text.strip():
                    files.append(label)
                    numbers.append(n)
                    texts.append(text)
    return pa.table({"file": pa.array(files, pa.string()), "line": pa.array(numbers, pa.int64()),
                     "raw": pa.array(texts, pa.string())}, schema=validate.LINES_SCHEMA)


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


def prior_ledger(derived: Path, date: str, version: str) -> pa.Table | None:
    """Ledger rows of earlier dates under the same codebook (parents of later revisions)."""
    base = storage.path(derived) / "source_risk_records"
    parts = [p for p in sorted(base.glob(f"observation_date=*/codebook={version}/data.parquet"))
             if p.parent.parent.name.split("=", 1)[1] < date]
    if not parts:
        return None
    tables = [parquet_io.read_table(p, columns=validate.PRIOR_SCHEMA.names) for p in parts]
    return pa.concat_tables([t.cast(validate.PRIOR_SCHEMA) for t in tables])


def audit(raw: Path, derived: Path, date: str, book: Codebook) -> AuditResult:
    """Validate the date's source-risk lines and resolve the current tuples under ``book``."""
    con = duck.connect()
    part = {"observation_date": date}
    read = parquet_io.read_optional
    captures = read(derived, "citation_captures", {**part, "codebook": book.version})
    if captures is None:
        captures = read(derived, "citation_captures", part)
    mode = "aligned_capture" if captures is not None else "record_url"
    settings = validate.Settings(book.priority_weights, tuple(sorted(book.source_roles)), mode)
    dated = layout.source_risk_lines(raw, date, answer_dates(derived))
    lines = pa.Table.from_pylist([dict(zip(("file", "line", "raw"), row, strict=True))
                                  for row in dated], schema=validate.LINES_SCHEMA)
    result = validate.validate(
        lines, settings,
        answers=answer_context(con, read(derived, "answers", part)),
        sources=source_context(con, read(derived, "citations", part), captures, book),
        prior=prior_ledger(derived, date, book.version),
        con=con,
    )
    ends = endpoint.endpoints(con, result.records, book)
    return AuditResult(result.records, result.rejected, ends, endpoint.claim_ledger(con, ends),
                       mode)
