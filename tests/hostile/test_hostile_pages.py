"""Bounded work per page: 100,000 nested ``<div>``s are cut with a named outcome before the
quadratic parse; a page whose text passes the evidence step's cap costs no more memory than a
capped one (its pairs ``unresolved``, ``page_text_too_large``, never a negative finding); a body
that decodes past the read cap is named, never cut.
Page sizes are generated here; the evidence test reads the shared small run."""

from __future__ import annotations

import random
import resource

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from citeaudit import codebook, parquet_io
from citeaudit.alignment import payload_text
from citeaudit.support import evidence


def _rss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


@pytest.mark.parametrize("n", [100_000, 1_000_000])
def test_deep_nesting_is_cut_before_parsing(n: int) -> None:
    html = "<html><body>" + "<div>" * n + "quote" + "</div>" * n + "</body></html>"
    with pytest.raises(payload_text.PageTooComplex) as err:
        payload_text.html_to_text(html)
    assert err.value.reason == "html_too_deep"


def test_ordinary_nesting_and_unclosed_optional_tags_still_read() -> None:
    deep_ok = "<div>" * 500 + "kept" + "</div>" * 500
    paragraphs = "<p>para " * 20_000  # unclosed <p>s close each other: no depth
    items = "<ul>" + "<li>item " * 20_000 + "</ul>"
    text = payload_text.html_to_text(f"<body>{deep_ok}{paragraphs}{items}<br>" * 1 + "</body>")
    assert "kept" in text and text.count("para") == 20_000 and text.count("item") == 20_000


def test_extracted_text_over_the_cap_is_a_named_outcome(monkeypatch) -> None:
    monkeypatch.setattr(payload_text, "MAX_TEXT_CHARS", 1000)
    with pytest.raises(payload_text.PageTooComplex) as err:
        payload_text.html_to_text("<body>" + "<p>word " * 500 + "</body>")
    assert err.value.reason == "text_too_large"


def test_a_body_past_the_read_cap_is_named_not_cut(tmp_path, monkeypatch) -> None:
    """A real gzip-coded WARC response whose body decodes past the cap: no text (a cut page
    would read as "the quote is not there"), error ``body_too_large``; one at the cap reads."""
    import gzip
    import io

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    monkeypatch.setattr(payload_text, "MAX_BYTES", 50_000)
    path = tmp_path / "big.warc.gz"
    offsets = []
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for size in (60_000, 40_000):
            html = b"<html><body><p>" + b"a" * (size - 30) + b"</p></body></html>"
            body = gzip.compress(html)
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html"),
                                                  ("Content-Encoding", "gzip"),
                                                  ("Content-Length", str(len(body)))],
                                       protocol="HTTP/1.1")
            offsets.append(fh.tell())
            writer.write_record(writer.create_warc_record(
                f"http://x.test/{size}", "response", payload=io.BytesIO(body),
                http_headers=headers))
    big, fits = (payload_text.extract_one(path, off) for off in offsets)
    assert big["text"] is None and big["error"].startswith("body_too_large"), big["error"]
    assert fits["error"] is None and fits["text_length"] > 30_000


def _inputs(small_run):
    f = sorted(small_run.derived.glob("support_evidence/*/codebook=v1/data.parquet"))[0]
    part = dict(p.split("=", 1) for p in (f.parent.parent.name, f.parent.name))
    day = {"observation_date": part["observation_date"]}
    tables = [parquet_io.read_partition(small_run.derived, name, where) for name, where in (
        ("claims", day), ("citations", day), ("answers", day), ("citation_captures", part),
        ("payload_texts", part))]
    return tables, codebook.load_version(small_run.raw, "v1")


def test_a_huge_page_costs_no_more_than_a_capped_one(small_run, tmp_path) -> None:
    (claims, citations, answers, aligned, texts), book = _inputs(small_run)
    pairs = evidence.evidence_pairs(claims, citations, answers, aligned, texts)
    cited = pairs.filter(pc.is_valid(pairs.column("payload_sha256")))
    big_page = cited.column("payload_sha256")[0].as_py()
    rng = random.Random(7)
    words = [f"w{rng.randrange(50_000)}" for _ in range(1_000)]
    huge = " ".join(rng.choice(words) for _ in range(600_000)) + ". "  # ~4 MB of text
    huge = huge * 3  # ~12 MB, past MAX_PAGE_TEXT_CHARS (2M) six times over
    i = texts.schema.get_field_index("text")
    texts = texts.set_column(i, texts.schema.field(i), pa.array(
        [huge if d == big_page else t for d, t in zip(
            texts.column("payload_sha256").to_pylist(), texts.column(i).to_pylist(),
            strict=True)], pa.string()))
    before = _rss_kib()
    batches = list(evidence.support_evidence_batches(claims, citations, answers, aligned, texts,
                                                     book, tmp_path))
    grown_mb = (_rss_kib() - before) / 1024
    rows = pa.Table.from_batches(batches).to_pylist()
    on_big = [r for r in rows if r["citation_id"] in set(
        cited.filter(pc.equal(cited.column("payload_sha256"), big_page))
        .column("citation_id").to_pylist())]
    assert on_big and all((r["verdict"], r["reason"]) == ("unresolved", "page_text_too_large")
                          for r in on_big)
    assert any(r["verdict"] != "unresolved" for r in rows)  # the other pages are scored
    # unbounded, this page alone cost about 30 bytes a character (~360 MB); capped, the step
    # grows by what the small run's own pages need
    assert grown_mb < 150, f"support_evidence grew {grown_mb:.0f} MB"


def test_a_dead_writers_temporary_file_is_removed_by_the_next_write(tmp_path) -> None:
    """A ``.index.html.<pid>.tmp`` left by a writer that died (a full disk, kill -9) goes at
    the next write of that file; a live writer's is left alone."""
    import os
    import subprocess
    import sys

    from citeaudit import storage

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    final = tmp_path / "index.html"
    stale = tmp_path / f".index.html.{dead}.tmp"
    live = tmp_path / f".index.html.{os.getppid()}.tmp"
    stale.write_text("half a report")
    live.write_text("being written")
    storage.write_bytes_atomic(final, b"<html></html>")
    assert final.read_bytes() == b"<html></html>"
    assert not stale.exists() and live.exists()


@pytest.mark.parametrize("charset", ["rot13", "zlib", "base64", "idna", "undefined",
                                     "unicode_escape", "x" * 500])
def test_a_declared_codec_that_is_no_charset_falls_through(charset: str) -> None:
    """``charset=rot13`` used to raise LookupError and fail the whole payload_texts step."""
    body = "<p>café \\N{x}</p>".encode() * 50
    text, used = payload_text.decode_body(body, f"text/html; charset={charset}")
    assert used != charset and text.startswith("<p>caf") and "\\N{x}" in text
