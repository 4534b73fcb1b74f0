"""A killed crawl's files are settled by the next crawl: the complete records of its WARC kept
under the final name, a record cut by the kill dropped, its journal turned into its log (a row
whose record was cut loses its WARC location)."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import os
import subprocess
import sys
from io import BytesIO

import pyarrow.parquet as pq
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from citeaudit.archive.capture.resume import recover

DAY = "2026-11-03"


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_killed_crawls_warc_and_journal_are_settled(tmp_path):
    pid = _dead_pid()
    folder = tmp_path / "warc" / "2026-12-02"
    folder.mkdir(parents=True)
    name = f"citeaudit-{DAY}-00001.warc.gz"
    buf = BytesIO()
    w = WARCWriter(buf, gzip=True, warc_version="WARC/1.1")
    w.write_record(w.create_warcinfo_record(name, {"software": "test"}))
    offsets = []
    for i in range(3):
        offsets.append(buf.tell())
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")],
                                protocol="HTTP/1.1")
        w.write_record(w.create_warc_record(f"http://a.test/p{i}", "response",
                                            payload=BytesIO(b"hi"), http_headers=http))
    complete = buf.tell()
    # the kill cut the next record's gzip member short (random bytes do not compress)
    cut = gzip.compress(b"WARC/1.1\r\nWARC-Type: response\r\n" + os.urandom(5000))[:100]
    (folder / f"{name}.{pid}.open").write_bytes(buf.getvalue() + cut)
    logs = tmp_path / "fetch_logs" / DAY
    logs.mkdir(parents=True)
    when = dt.datetime(2026, 12, 2, 10, tzinfo=dt.UTC)
    rows = [{"cited_url": f"http://a.test/p{i}", "url": f"http://a.test/p{i}", "hop": 0,
             "attempt": 1, "purpose": "reference", "outcome": "fetched",
             "requested_at": str(when), "record_type": "response",
             "warc_file": f"warc/2026-12-02/{name}", "warc_offset": off, "warc_length": 10}
            for i, off in enumerate([*offsets, complete])]
    (logs / f"20261202T100000000000Z-{pid}.jsonl.open").write_text(
        "\n".join(json.dumps(r) for r in rows) + "\n{\"cut short", encoding="utf-8")

    assert recover(tmp_path, DAY) == {"warc_files": 1, "log_rows": 4}
    assert not list(tmp_path.rglob("*.open"))
    with open(folder / name, "rb") as fh:
        recs = [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(fh)
                if r.rec_type == "response"]
    assert recs == ["http://a.test/p0", "http://a.test/p1", "http://a.test/p2"]
    assert (folder / name).stat().st_size == complete
    [log] = list(logs.glob("*.parquet"))
    got = pq.read_table(log).to_pylist()
    assert [r["warc_offset"] for r in got] == [*offsets, None]
    assert "record lost" in got[3]["detail"]
    assert got[0]["requested_at"] == when


def test_a_file_with_only_warcinfo_is_removed_and_live_files_are_left(tmp_path):
    folder = tmp_path / "warc" / "2026-12-02"
    folder.mkdir(parents=True)
    buf = BytesIO()
    w = WARCWriter(buf, gzip=True, warc_version="WARC/1.1")
    w.write_record(w.create_warcinfo_record("x", {"software": "test"}))
    dead = folder / f"citeaudit-{DAY}-00001.warc.gz.{_dead_pid()}.open"
    dead.write_bytes(buf.getvalue())
    mine = folder / f"citeaudit-{DAY}-00002.warc.gz.{os.getpid()}.open"
    mine.write_bytes(buf.getvalue())
    assert recover(tmp_path, DAY) == {"warc_files": 0, "log_rows": 0}
    assert not dead.exists() and mine.exists()
    assert not (folder / f"citeaudit-{DAY}-00001.warc.gz").exists()
