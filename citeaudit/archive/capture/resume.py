"""A killed crawl resumes: what it fetched before the kill is kept and not fetched again.

A crawl writes its WARC as ``<name>.<pid>.open`` and its log rows, one JSON line each, to a
journal ``fetch_logs/<date>/<stamp>-<pid>.jsonl.open`` (flushed per row). When the process
ends normally the WARC is renamed and the log written as parquet. When it is killed, the next
crawl (:func:`recover`, before it plans) finds the files of the dead process and:

- cuts its WARC after the last complete gzip member (each record is one member) and renames it
  to its final name, so the pages fetched before the kill are captures the plan sees (they are
  then ``skipped_recent_capture``, not fetched again); a file holding nothing but its
  ``warcinfo`` is removed;
- turns its journal into that crawl's parquet log; a row whose record was cut off loses its
  WARC location and says so in ``detail``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import zlib
from pathlib import Path

import pyarrow as pa

from citeaudit import storage
from citeaudit.parquet_io import pid_alive

JOURNAL_SUFFIX = ".jsonl.open"


def _complete_members(path: Path) -> tuple[int, int]:
    """(bytes up to the end of the last complete gzip member, number of complete members)."""
    end = pos = members = 0
    d = zlib.decompressobj(31)
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            buf = chunk
            while buf:
                try:
                    d.decompress(buf, 1 << 22)
                    while d.unconsumed_tail and not d.eof:
                        d.decompress(d.unconsumed_tail, 1 << 22)
                except zlib.error:
                    return end, members
                if d.eof:
                    used = len(buf) - len(d.unused_data)
                    pos += used
                    end, members = pos, members + 1
                    buf = d.unused_data
                    d = zlib.decompressobj(31)
                else:
                    pos += len(buf)
                    buf = b""
    return end, members


def _pid_of(name: str, suffix: str) -> int | None:
    """The PID in ``<name>.<pid><suffix>`` (WARC) or ``<stamp>-<pid><suffix>`` (journal)."""
    stem = name[: -len(suffix)]
    tail = stem.rsplit(".", 1)[-1] if suffix == ".open" else stem.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else None


def salvage_warc(path: Path) -> tuple[Path | None, int]:
    """Keep the complete records of a dead crawl's ``.open`` WARC under its final name;
    returns (final path or None when nothing was worth keeping, bytes kept)."""
    end, members = _complete_members(path)
    final = path.with_name(path.name.rsplit(".", 2)[0])
    if members <= 1 or final.exists():  # only warcinfo (or a name already taken): drop it
        path.unlink(missing_ok=True)
        return None, 0
    with open(path, "r+b") as fh:
        fh.truncate(end)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(path, final)
    return final, end


def stale(paths: list[Path], suffix: str) -> list[Path]:
    """The files of ``paths`` written by processes that no longer run."""
    out = []
    for p in paths:
        pid = _pid_of(p.name, suffix)
        if pid is not None and pid != os.getpid() and not pid_alive(pid):
            out.append(p)
    return out


def recover(raw: Path, observation_date: str) -> dict[str, int]:
    """Salvage the WARCs and journals of killed crawls of one observation date (see the module
    docstring); returns counts of what was kept."""
    from citeaudit.archive.capture.fetch_log import FETCH_LOG_SCHEMA, LOG_FOLDER, write_log

    root = storage.path(raw)
    kept: dict[str, int] = {}
    for p in stale(sorted((root / "warc").glob(f"*/citeaudit-{observation_date}-*.open")),
                   ".open"):
        final, size = salvage_warc(p)
        if final is not None:
            kept[final.relative_to(root).as_posix()] = size
    n_rows = 0
    folder = root / LOG_FOLDER / observation_date
    for j in stale(sorted(folder.glob(f"*{JOURNAL_SUFFIX}")) if folder.is_dir() else [],
                   JOURNAL_SUFFIX):
        rows = []
        for line in j.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue  # the line the kill cut short
            if row.get("requested_at"):
                row["requested_at"] = dt.datetime.fromisoformat(row["requested_at"])
            f, off = row.get("warc_file"), row.get("warc_offset")
            size = kept.get(f) if f else None
            if f and size is None and (root / f).is_file():  # salvaged earlier, or finished
                size = (root / f).stat().st_size
            if f and (size is None or off is None
                      or off + (row.get("warc_length") or 0) > size):
                row.update(warc_file=None, warc_offset=None, warc_length=None,
                           record_type=None,
                           detail=((row.get("detail") or "") + " (record lost: the crawl was "
                                   "killed before it was written)").strip())
            rows.append(dict.fromkeys(FETCH_LOG_SCHEMA.names) | row)
        if rows:
            table = pa.Table.from_pylist(rows, FETCH_LOG_SCHEMA)
            write_log(raw, observation_date, table, min(r["requested_at"] for r in rows
                                                        if r["requested_at"])
                      if any(r["requested_at"] for r in rows) else dt.datetime.now(dt.UTC))
            n_rows += len(rows)
        j.unlink(missing_ok=True)
    return {"warc_files": len(kept), "log_rows": n_rows}
