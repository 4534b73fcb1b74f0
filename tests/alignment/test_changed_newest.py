"""L1 `changed` compares the aligned capture with the newest readable capture after the
reference time, whenever it was taken; a later 404/410 is `changed` (gone_since_citation)."""

from __future__ import annotations

import datetime as dt
import json
from io import BytesIO
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from citeaudit import codebook, parquet_io
from citeaudit.alignment import align
from citeaudit.archive.index import index_paths
from citeaudit.demo_corpus.codebooks import write_codebooks
from citeaudit.ingest.answers import answer_files, ingest_files

T = dt.datetime(2026, 5, 10, 12, tzinfo=dt.UTC)
H, D = dt.timedelta(hours=1), dt.timedelta(days=1)

# path -> captures (offset from the reference time, status, body)
PAGES = {
    "/moved-on": [(-H, 200, b"A"), (30 * D, 200, b"B")],       # outside the window: changed
    "/gone": [(-H, 200, b"A"), (20 * D, 410, b"gone")],         # gone since citation
    "/back": [(-H, 200, b"A"), (3 * H, 200, b"B"), (20 * D, 200, b"A")],  # newest same: pass
    "/outage": [(-H, 200, b"A"), (10 * D, 503, b"down")],       # says nothing: pass
    "/still": [(-H, 200, b"A"), (40 * D, 200, b"A")],           # same content: pass
    "/dead-then": [(-H, 404, b"no"), (5 * D, 410, b"no")],       # dead when cited: dead
}


def write_warc(path: Path, records: list[tuple[str, dt.datetime, int, bytes]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        w = WARCWriter(fh, gzip=True)
        for url, when, status, body in records:
            http = StatusAndHeaders(f"{status} X", [("Content-Type", "text/html")],
                                    protocol="HTTP/1.1")
            w.write_record(w.create_warc_record(
                url, "response", payload=BytesIO(b"<html>" + body + b"</html>"),
                http_headers=http,
                warc_headers_dict={"WARC-Date": when.strftime("%Y-%m-%dT%H:%M:%SZ")}))


def test_changed_uses_the_newest_later_capture_whenever_taken(tmp_path):
    raw, derived = tmp_path / "raw", tmp_path / "derived"
    by_day: dict[str, list] = {}
    for path, caps in PAGES.items():
        for offset, status, body in caps:
            when = T + offset
            by_day.setdefault(when.date().isoformat(), []).append(
                (f"http://site.test{path}", when, status, body))
    for day, recs in by_day.items():
        f = raw / "warc" / day / "c.warc.gz"
        write_warc(f, recs)
        table = index_paths([(f, f.relative_to(raw).as_posix())], workers=1)
        parquet_io.write_partition(table, derived, "captures", {"crawl_date": day})
    answer = {
        "answer_id": "a1", "query_id": "q", "query_text": "q", "engine": "perplexity",
        "observed_at": T.strftime("%Y-%m-%dT%H:%M:%SZ"), "answer_text": "Text.",
        "strata": {"domain": "news", "risk_band": "low", "inclusion_prob": 1},
        "claims": [{"claim_id": "k0", "span": [0, 5], "text": "Text.",
                    "verification_worthy": True,
                    "citations": [{"citation_id": p.strip("/"), "url": f"http://site.test{p}"}
                                  for p in PAGES]}],
    }
    folder = raw / "answers" / T.date().isoformat()
    folder.mkdir(parents=True)
    (folder / "a.jsonl").write_text(json.dumps(answer) + "\n")
    write_codebooks(raw / "codebooks")
    ingested = ingest_files(answer_files(raw, T.date().isoformat()), raw)
    book = codebook.load_version(raw, "v1")
    aligned = align.align(ingested.citations, ingested.answers, derived, book)
    got = {r["citation_id"]: r for r in align.existence(aligned).to_pylist()}
    states = {k: (v["verdict"], v["reason"]) for k, v in got.items()}
    assert states == {
        "moved-on": ("changed", "content_changed_since_citation"),
        "gone": ("changed", "gone_since_citation"),
        "back": ("pass", "ok"),
        "outage": ("pass", "ok"),
        "still": ("pass", "ok"),
        "dead-then": ("dead", "http_404"),
    }
    assert got["moved-on"]["later_capture_time"] == T + 30 * D
    assert got["gone"]["later_capture_time"] == T + 20 * D
    assert got["back"]["later_capture_time"] == T + 20 * D
