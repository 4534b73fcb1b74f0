"""Splitting one gzip WARC into byte ranges indexed by parallel workers (``index_paths``).

The rule under test: a split file gives rows identical to indexing it whole with
``index_file``, for any worker count; a file that cannot be split safely (whole-file gzip,
a record FastWARC refuses, a request/response pair across a cut, a crash) is indexed whole.
Splitting is forced on small files with ``split_min_bytes=1``.
"""

from __future__ import annotations

import gzip
import io
import logging
import os
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from fastwarc.warc import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from citeaudit.archive.index import files as index
from citeaudit.archive.index import index_file, index_paths, iter_index_paths, readers
from citeaudit.archive.index import ranges as split_ranges
from citeaudit.demo_corpus import generate

WORKER_COUNTS = (2, 3, 7)
LOGGER = "citeaudit.archive.index"
DATE = "2024-05-06T07:08:09Z"


# ---------------------------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_warcs(tmp_path_factory) -> list[tuple[Path, str]]:
    """The demo corpus's WARCs (``tmp/warc/**``), named by their path under ``tmp``."""
    root = tmp_path_factory.mktemp("demo")
    generate(root, answers=300, days=1)
    files = sorted((root / "warc").rglob("*.warc.gz"))
    assert len(files) >= 3
    return [(p, "demo/" + p.relative_to(root).as_posix()) for p in files]


@pytest.fixture(scope="module")
def corpus_warcs(request) -> list[tuple[Path, str]]:
    """Every gzip WARC in ../shared/corpora/warc (skips with the reason when absent)."""
    corpora = request.getfixturevalue("corpora")
    root = corpora / "warc"
    files = sorted(root.rglob("*.warc.gz"))
    assert files, f"no *.warc.gz under {root}"
    return [(p, p.relative_to(root).as_posix()) for p in files]


def _unsplit(files: list[tuple[Path, str]]) -> dict[str, pa.Table]:
    return {
        name: index_file(path, name=name).replace_schema_metadata(None) for path, name in files
    }


def _rows_of(table: pa.Table, name: str) -> pa.Table:
    return table.filter(pc.equal(table.column("file"), name))


def _record_offsets(path: Path) -> list[int]:
    """Where FastWARC finds records (every record, indexed or not), 0 excluded."""
    try:
        with open(path, "rb") as fh:
            found = [r.stream_pos for r in ArchiveIterator(fh, parse_http=False)]
    except Exception:
        return []
    return sorted({pos for pos in found if pos > 0})


def _reader_of(path: Path) -> str:
    return index_file(path).schema.metadata[b"citeaudit.reader"].decode()


def _check_split_equals_unsplit(files, caplog) -> None:
    """index_paths with forced splitting == index_file, per file, for 2, 3 and 7 workers."""
    expected = _unsplit(files)
    outputs = []
    for workers in WORKER_COUNTS:
        caplog.clear()
        with caplog.at_level(logging.INFO, logger=LOGGER):
            table = index_paths(files, workers=workers, split_min_bytes=1)
        for _path, name in files:
            assert _rows_of(table, name).equals(expected[name]), (name, workers)
        keys = list(zip(table.column("file").to_pylist(), table.column("offset").to_pylist(),
                        strict=True))
        assert keys == sorted(keys)
        # a file FastWARC reads whole is never given up on (its cuts avoid request/response
        # pairs); the only files indexed whole after all are those FastWARC refuses
        whole = {r.getMessage().split(" ")[1] for r in caplog.records if "not split" in r.msg}
        for path, _name in files:
            if str(path) in whole:
                assert _reader_of(path) == "warcio", path
        outputs.append(table)
    buffers = []
    for table in outputs:  # byte-identical output whatever the worker count
        buf = io.BytesIO()
        pq.write_table(table, buf, compression="zstd")
        buffers.append(buf.getvalue())
    assert buffers[0] == buffers[1] == buffers[2]


# ---------------------------------------------------------------------------------------------
# split == unsplit on real and demo WARCs
# ---------------------------------------------------------------------------------------------


def test_demo_warcs_split_rows_identical(demo_warcs, caplog):
    # the demo crawl writes each response followed by its request (WARC-Concurrent-To), has
    # revisits, a short record (FastWARC refuses that file) and a WARC-Truncated record
    plans = {name: split_ranges.plan_split(str(p), 3, 1) for p, name in demo_warcs}
    assert sum(plan is not None and len(plan) == 3 for plan in plans.values()) >= 2
    _check_split_equals_unsplit(demo_warcs, caplog)


def test_corpus_warcs_split_rows_identical(corpus_warcs, caplog):
    split = [name for p, name in corpus_warcs if split_ranges.plan_split(str(p), 7, 1)]
    assert {"pywb/warcs/iana.warc.gz", "warcio/post-test.warc.gz"} <= set(split)
    _check_split_equals_unsplit(corpus_warcs, caplog)


def test_every_planned_split_is_accepted_and_identical(demo_warcs, corpus_warcs):
    """The ranges read in one process: accepted for every file FastWARC reads whole."""
    for path, name in demo_warcs + corpus_warcs:
        unsplit = index_file(path, name=name)
        for parts in WORKER_COUNTS:
            ranges = split_ranges.plan_split(str(path), parts, 1)
            if ranges is None:
                continue
            assert ranges[0][0] == 0 and ranges[-1][1] == path.stat().st_size
            assert all(a < b for a, b in ranges)
            assert all(r[1] == s[0] for r, s in zip(ranges, ranges[1:], strict=False))
            table, why = split_ranges._index_ranges_serial(str(path), name, ranges)
            if unsplit.schema.metadata[b"citeaudit.reader"] == b"fastwarc":
                assert table is not None, (name, parts, why)
                assert table.equals(unsplit.replace_schema_metadata(None)), (name, parts)
            else:
                assert table is None and "FastwarcRefused" in why


def test_any_cut_gives_identical_rows_or_none(demo_warcs, corpus_warcs):
    """Cuts chosen by hand, at record boundaries and at random bytes: never a wrong row.

    A cut inside a gzip member, or between a response and its request, must be refused
    (None: the caller then indexes the file whole); a cut at any other record boundary
    must give exactly the unsplit rows.
    """
    rng = random.Random(7)
    refused_pairs = accepted = 0
    for path, name in demo_warcs + corpus_warcs:
        size = path.stat().st_size
        unsplit = index_file(path, name=name)
        expected = unsplit.replace_schema_metadata(None)
        fastwarc_ok = unsplit.schema.metadata[b"citeaudit.reader"] == b"fastwarc"
        boundaries = _record_offsets(path)
        picked = boundaries if len(boundaries) <= 12 else rng.sample(boundaries, 12)
        for cut in picked:
            table, why = split_ranges._index_ranges_serial(str(path), name, [(0, cut), (cut, size)])
            if table is None:
                assert not fastwarc_ok or why == "a request/response pair spans a cut", why
                refused_pairs += why == "a request/response pair spans a cut"
            else:
                assert table.equals(expected), (name, cut)
                accepted += 1
        boundary_set = set(boundaries)
        for cut in (rng.randrange(1, size) for _ in range(6)):
            if cut in boundary_set:
                continue
            table, why = split_ranges._index_ranges_serial(str(path), name, [(0, cut), (cut, size)])
            assert table is None and "FastwarcRefused" in why, (name, cut)
        if len(boundaries) > 1:  # every record in its own range
            bounds = [0, *boundaries, size]
            table, why = split_ranges._index_ranges_serial(
                str(path), name, list(zip(bounds, bounds[1:], strict=False))
            )
            assert table is None or table.equals(expected), name
    assert refused_pairs > 0 and accepted > 0


def test_post_pair_across_a_cut_is_refused(corpus_warcs):
    (path,) = [p for p, name in corpus_warcs if name == "warcio/post-test.warc.gz"]
    size = path.stat().st_size
    offsets = _record_offsets(path)  # response at 0, its request, response, request, ...
    table, why = split_ranges._index_ranges_serial(
        str(path), "p", [(0, offsets[0]), (offsets[0], size)]
    )
    assert table is None and why == "a request/response pair spans a cut"
    table, why = split_ranges._index_ranges_serial(
        str(path), "p", [(0, offsets[1]), (offsets[1], size)]
    )
    assert table is not None
    assert table.equals(index_file(path, name="p").replace_schema_metadata(None))
    assert "__wb_method=post" in table.column("urlkey")[1].as_py()


# ---------------------------------------------------------------------------------------------
# generated WARCs: POST requests before their responses, files that must not be split
# ---------------------------------------------------------------------------------------------


def _exchange_warc(path: Path, n: int, request_first: bool = True) -> Path:
    """``n`` POST exchanges (request then response, or response then request) + GETs."""
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        writer.write_record(writer.create_warcinfo_record(path.name, {"software": "test"}))
        for i in range(n):
            url = f"http://example.com/api/{i % 5}"
            body = f"q={i}&name=item+{i}".encode()
            req_http = StatusAndHeaders(
                "POST /api HTTP/1.1",
                [("Content-Type", "application/x-www-form-urlencoded"),
                 ("Content-Length", str(len(body)))],
                is_http_request=True,
            )
            request = writer.create_warc_record(
                url, "request", payload=io.BytesIO(body), http_headers=req_http,
                warc_headers_dict={"WARC-Date": DATE},
            )
            page = f"<html>result {i}</html>".encode() * (1 + i % 7)
            resp_http = StatusAndHeaders(
                "200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(page)))],
                protocol="HTTP/1.1",
            )
            response = writer.create_warc_record(
                url, "response", payload=io.BytesIO(page), http_headers=resp_http,
                warc_headers_dict={"WARC-Date": DATE},
            )
            first, second = (request, response) if request_first else (response, request)
            second.rec_headers.add_header(
                "WARC-Concurrent-To", first.rec_headers.get_header("WARC-Record-ID")
            )
            writer.write_record(first)
            writer.write_record(second)
    return path


@pytest.mark.parametrize("request_first", [True, False])
def test_post_exchanges_split_anywhere_keep_their_keys(tmp_path, request_first):
    path = _exchange_warc(tmp_path / "post.warc.gz", 40, request_first)
    expected = index_file(path, name="post.warc.gz").replace_schema_metadata(None)
    keys = expected.column("urlkey").to_pylist()
    assert len(keys) == 40 and all("__wb_method=post&name=item" in key for key in keys)
    for workers in WORKER_COUNTS:
        ranges = split_ranges.plan_split(str(path), workers, 1)
        assert ranges is not None and len(ranges) == workers
        for a, _b in ranges[1:]:  # every cut starts an exchange, never splits one
            with open(path, "rb") as fh:
                fh.seek(a)
                first = next(iter(ArchiveIterator(fh, parse_http=False)))
                assert first.stream_pos == a
                assert first.headers.get("WARC-Concurrent-To") is None
        table = index_paths([(path, "post.warc.gz")], workers=workers, split_min_bytes=1)
        assert table.equals(expected)


def test_whole_file_gzip_is_not_split(tmp_path, corpus_warcs):
    (bad,) = [p for p, name in corpus_warcs if name == "warcio/example-bad-non-chunked.warc.gz"]
    assert split_ranges.plan_split(str(bad), 2, 1) is None
    before = index_file(bad, name="bad").replace_schema_metadata(None)
    assert "whole_file_gzip" in (before.column("error")[0].as_py() or "")
    for workers in WORKER_COUNTS:
        assert index_paths([(bad, "bad")], workers=workers, split_min_bytes=1).equals(before)


def test_generated_whole_file_gzip_is_not_split(tmp_path):
    plain = _exchange_warc(tmp_path / "x.warc.gz", 30)
    records = gzip.decompress(plain.read_bytes())
    whole = tmp_path / "whole.warc.gz"
    whole.write_bytes(gzip.compress(records, mtime=0))  # one member for all records
    assert split_ranges.plan_split(str(whole), 3, 1) is None
    assert readers.gzip_record_cuts(whole, [whole.stat().st_size // 2]) == []
    expected = index_file(whole, name="w").replace_schema_metadata(None)
    assert set(expected.column("error").to_pylist()) == {"whole_file_gzip"}
    assert index_paths([(whole, "w")], workers=3, split_min_bytes=1).equals(expected)


def test_what_is_not_split(tmp_path):
    path = _exchange_warc(tmp_path / "small.warc.gz", 10)
    assert split_ranges.plan_split(str(path), 2, path.stat().st_size) is None  # not larger
    assert split_ranges.plan_split(str(path), 2, None) is None
    assert split_ranges.plan_split(str(path), 1, 1) is None  # one worker
    renamed = tmp_path / "small.warc.gzip"
    renamed.write_bytes(path.read_bytes())
    assert split_ranges.plan_split(str(renamed), 2, 1) is None  # not a .warc.gz name
    plain = tmp_path / "plain.warc.gz"  # named .gz but not compressed
    plain.write_bytes(gzip.decompress(path.read_bytes()))
    assert split_ranges.plan_split(str(plain), 2, 1) is None
    assert split_ranges.plan_split(str(tmp_path / "missing.warc.gz"), 2, 1) is None
    # the default threshold leaves small files alone: the pool sees one whole-file task
    assert split_ranges.plan_split(str(path), 2, index.SPLIT_MIN_BYTES) is None


def test_fastwarc_range_must_start_and_end_on_records(tmp_path):
    path = _exchange_warc(tmp_path / "r.warc.gz", 6)
    offsets = _record_offsets(path)
    size = path.stat().st_size

    def offsets_read(start, end):
        slots = []
        for slot in readers.fastwarc_slots(path, gz=True, start=start, end=end):
            slot.block.read(1 << 20)
            slots.append(slot)
        return [(s.offset, s.length) for s in slots]

    middle = offsets_read(offsets[2], offsets[5])
    assert [o for o, _ in middle] == offsets[2:5]
    assert middle[-1][0] + middle[-1][1] == offsets[5]
    assert offsets_read(offsets[5], size)[-1][0] == offsets[-1]
    with pytest.raises(readers.FastwarcRefused):
        offsets_read(offsets[2] + 1, offsets[5])
    with pytest.raises(readers.FastwarcRefused):
        offsets_read(offsets[2], offsets[5] + 1)


# ---------------------------------------------------------------------------------------------
# fallbacks inside the pool (stand-ins for the range job are module-level so that they pickle;
# monkeypatched before the pool forks its workers, they replace the real one there too)
# ---------------------------------------------------------------------------------------------

_REAL_RANGE_JOB = index.index_range_job


def _refuse_last_range(args):
    path, _name, start, end, _all = args
    if start > 0 and end == os.path.getsize(path):
        return None, "refused for the test", None, None
    return _REAL_RANGE_JOB(args)


def _die(_args):
    os._exit(3)  # a worker crash (as in a C extension): the pool breaks


def test_a_refused_range_means_the_file_is_indexed_whole(tmp_path, monkeypatch, caplog):
    path = _exchange_warc(tmp_path / "f.warc.gz", 30, request_first=False)
    other = _exchange_warc(tmp_path / "g.warc.gz", 5)
    expected = index_paths([(path, "f"), (other, "g")], workers=1)
    monkeypatch.setattr(index, "index_range_job", _refuse_last_range)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        table = index_paths([(path, "f"), (other, "g")], workers=3, split_min_bytes=1)
    assert table.equals(expected)
    messages = [r.getMessage() for r in caplog.records]
    assert sum("refused for the test" in m for m in messages) == 2, messages
    assert not any("worker failed" in m for m in messages)


def test_a_pair_across_a_cut_means_the_file_is_indexed_whole(tmp_path, monkeypatch, caplog):
    path = _exchange_warc(tmp_path / "f.warc.gz", 30, request_first=True)
    expected = index_file(path, name="f").replace_schema_metadata(None)
    offsets = _record_offsets(path)  # warcinfo at 0, then request, response, request, ...
    size = path.stat().st_size
    bad_cut = offsets[1]  # between the first request and its response
    monkeypatch.setattr(index, "plan_split", lambda *a: [(0, bad_cut), (bad_cut, size)])
    with caplog.at_level(logging.INFO, logger=LOGGER):
        table = index_paths([(path, "f")], workers=2, split_min_bytes=1)
    assert table.equals(expected)
    assert any("pair spans a cut" in r.getMessage() for r in caplog.records)


def test_a_dead_worker_falls_back_to_warcio(tmp_path, monkeypatch, caplog):
    path = _exchange_warc(tmp_path / "f.warc.gz", 20)
    other = _exchange_warc(tmp_path / "g.warc.gz", 3)
    expected = index_file(path, name="f", reader="warcio").replace_schema_metadata(None)
    monkeypatch.setattr(index, "index_range_job", _die)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        streamed = dict(
            iter_index_paths([(path, "f"), (other, "g")], workers=2, split_min_bytes=1)
        )
    assert sorted(streamed) == ["f", "g"]
    assert streamed["f"].equals(expected)
    assert streamed["g"].equals(index_file(other, name="g").replace_schema_metadata(None))
    assert any("worker failed" in r.getMessage() for r in caplog.records)
