"""Unit tests of the capture index on small WARCs written here with warcio's WARCWriter.

Each test writes real WARC bytes (gzip per record unless said otherwise), indexes them with
both readers and checks the rows, including that (offset, length) really locate each record:
warcio must read the same record back from exactly those bytes, as pywb would on replay.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import random
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from citeaudit.archive.index import (
    CAPTURE_SCHEMA,
    dates,
    digests,
    http_head,
    index_file,
    index_paths,
    iter_index_paths,
    register_cli,
    to_cdxj_lines,
)
from citeaudit.archive.index import post_query as post_queries

DATE = "2024-05-06T07:08:09Z"
READERS = ("warcio", "fastwarc", "auto")


# ---------------------------------------------------------------------------------------------
# helpers: write WARCs with warcio
# ---------------------------------------------------------------------------------------------


def http_headers(status: str, extra=(), mime: str = "text/html") -> StatusAndHeaders:
    headers = [("Content-Type", mime), *extra]
    return StatusAndHeaders(status, headers, protocol="HTTP/1.1")


def response(writer, url, status="200 OK", body=b"<html>hi</html>", extra=(), date=DATE,
             warc_headers=None, mime="text/html"):
    headers = {"WARC-Date": date, **(warc_headers or {})}
    # an explicit length keeps the writer from recomputing digests a test has replaced
    return writer.create_warc_record(
        url, "response", payload=io.BytesIO(body), length=len(body),
        http_headers=http_headers(status, extra, mime), warc_headers_dict=headers)


def write_warc(path: Path, build, gz: bool = True) -> Path:
    """``build(writer)`` returns the records to write, in order."""
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=gz)
        for record in build(writer):
            writer.write_record(record)
    return path


def rows(path: Path, reader: str = "auto", **kw) -> list[dict]:
    return index_file(path, name=path.name, reader=reader, **kw).to_pylist()


def all_readers(path: Path, refused: bool = False, **kw) -> list[dict]:
    """Rows from every reader; asserts they are identical.

    With ``refused``, asserts instead that FastWARC refuses the file and that "auto" falls
    back to warcio.
    """
    results = {r: rows(path, r, **kw) for r in READERS}
    if refused:
        (row,) = results["fastwarc"]
        assert row["error"].startswith("fastwarc_refused: ")
        assert results["warcio"] == results["auto"]
    else:
        assert results["warcio"] == results["fastwarc"] == results["auto"]
    return results["warcio"]


def assert_replayable(path: Path, table_rows: list[dict]) -> None:
    """Each (offset, length) holds exactly its record, readable on its own by warcio."""
    data = path.read_bytes()
    for row in table_rows:
        piece = data[row["offset"]: row["offset"] + row["length"]]
        records = list(ArchiveIterator(io.BytesIO(piece)))
        assert len(records) == 1, row
        assert records[0].rec_headers.get_header("WARC-Record-ID") == row["record_id"]


def sha1_b32(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


# ---------------------------------------------------------------------------------------------
# records
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("gz", [True, False], ids=["gzip", "plain"])
def test_200_response_every_column(tmp_path, gz):
    body = b"<html><body>" + b"citation " * 500 + b"</body></html>"
    path = write_warc(tmp_path / ("a.warc.gz" if gz else "a.warc"), lambda w: [
        w.create_warcinfo_record("a.warc", {"software": "test"}),
        response(w, "http://www.Example.com/Page?b=2&a=1", body=body,
                 extra=[("Content-Length", str(len(body)))], mime="text/html; charset=utf-8"),
    ], gz=gz)
    (row,) = all_readers(path)
    assert row["file"] == path.name
    assert row["record_type"] == "response"
    assert row["target_uri"] == "http://www.Example.com/Page?b=2&a=1"
    assert row["urlkey"] == "com,example)/page?a=1&b=2"
    assert row["capture_time"] == datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)
    assert row["timestamp"] == "20240506070809"
    assert row["warc_date_raw"] == DATE
    assert row["http_status"] == 200
    assert row["redirect_location"] is None
    assert row["mime"] == "text/html"
    assert row["declared_payload_digest"] == sha1_b32(body)
    assert row["cdx_digest"] == sha1_b32(body)
    assert row["digest_verified"] is True
    assert row["payload_sha256"] == hashlib.sha256(body).hexdigest()
    assert row["payload_length"] == len(body)
    assert row["record_id"].startswith("<urn:uuid:")
    assert row["truncated"] is False
    assert row["error"] is None
    assert_replayable(path, [row])
    # offset/length as warcio's own iterator (pywb, cdxj-indexer) computes them
    with open(path, "rb") as fh:
        it = ArchiveIterator(fh)
        spans = [(it.get_record_offset(), it.get_record_length()) for _ in it]
    assert (row["offset"], row["length"]) == spans[1]


@pytest.mark.parametrize(
    ("status", "location"),
    [("301 Moved Permanently", "https://example.com/new"), ("302 Found", "/relative/target")],
)
def test_redirects_keep_location(tmp_path, status, location):
    path = write_warc(tmp_path / "r.warc.gz", lambda w: [
        response(w, "http://example.com/old", status=status, body=b"",
                 extra=[("Location", location)]),
    ])
    (row,) = all_readers(path)
    assert row["http_status"] == int(status[:3])
    assert row["redirect_location"] == location
    assert row["digest_verified"] is True  # sha1 of the empty payload
    assert row["payload_length"] == 0


@pytest.mark.parametrize("status", ["404 Not Found", "410 Gone", "500 Internal Server Error"])
def test_error_statuses(tmp_path, status):
    path = write_warc(tmp_path / "e.warc.gz", lambda w: [
        response(w, "http://example.com/missing", status=status, body=b"<h1>nope</h1>",
                 extra=[("Location", "http://ignored.example/")]),
    ])
    (row,) = all_readers(path)
    assert row["http_status"] == int(status[:3])
    assert row["redirect_location"] is None  # only kept for 3xx
    assert row["error"] is None
    assert row["digest_verified"] is True


def test_revisits_same_uri_and_uri_agnostic(tmp_path):
    body = b"<html>same payload</html>"
    digest = sha1_b32(body)

    def build(w):
        original = response(w, "http://example.com/a", body=body)
        same = w.create_revisit_record(
            "http://example.com/a", digest, "http://example.com/a", DATE,
            http_headers=http_headers("200 OK"),
            warc_headers_dict={"WARC-Date": "2024-06-01T00:00:00Z"})
        agnostic = w.create_revisit_record(
            "http://mirror.example.org/copy", digest, "http://example.com/a", DATE,
            warc_headers_dict={"WARC-Date": "2024-06-02T00:00:00Z"})
        return [original, same, agnostic]

    path = write_warc(tmp_path / "v.warc.gz", build)
    first, same, agnostic = all_readers(path)
    assert first["record_type"] == "response"
    for row in (same, agnostic):
        assert row["record_type"] == "revisit"
        assert row["mime"] == "warc/revisit"
        assert row["declared_payload_digest"] == digest == row["cdx_digest"]
        assert row["digest_verified"] is None  # nothing to check in a revisit
        assert row["payload_sha256"] is None
        assert row["payload_length"] is None
        assert row["refers_to_uri"] == "http://example.com/a"
        assert row["refers_to_date"] == DATE
        assert row["error"] is None
    assert same["http_status"] == 200  # HTTP headers present
    assert agnostic["http_status"] is None  # no HTTP headers in this revisit
    assert agnostic["urlkey"] == "org,example,mirror)/copy"
    assert_replayable(path, [first, same, agnostic])


@pytest.mark.parametrize("gz", [True, False], ids=["gzip", "plain"])
def test_truncated_record_cut_short(tmp_path, gz):
    body = random.Random(7).randbytes(20000)  # incompressible, so the cut lands in it
    full = write_warc(tmp_path / ("full.warc.gz" if gz else "full.warc"), lambda w: [
        response(w, "http://example.com/first"),
        response(w, "http://example.com/big", body=body),
    ], gz=gz)
    data = full.read_bytes()
    cut = tmp_path / ("cut.warc.gz" if gz else "cut.warc")
    cut.write_bytes(data[: len(data) - 3000])
    refused = rows(cut, "fastwarc")
    assert len(refused) == 1 and refused[0]["error"].startswith("fastwarc_refused")
    first, big = rows(cut, "warcio")
    assert rows(cut, "auto") == [first, big]
    assert first["error"] is None and first["truncated"] is False
    assert big["truncated"] is True
    assert big["error"] == "truncated_record"
    assert big["digest_verified"] is False
    assert 0 < big["payload_length"] < len(body)
    assert big["offset"] + big["length"] == len(data) - 3000


def test_warc_truncated_header_is_not_an_error(tmp_path):
    path = write_warc(tmp_path / "t.warc.gz", lambda w: [
        response(w, "http://example.com/long", body=b"first part only",
                 warc_headers={"WARC-Truncated": "length"}),
    ])
    (row,) = all_readers(path)
    assert row["truncated"] is True
    assert row["error"] is None
    assert row["digest_verified"] is True  # the digest covers what was kept


def test_chunked_body_digest_as_stored_or_dechunked(tmp_path):
    chunked = b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
    dechunked_digest = sha1_b32(b"hello world")

    def build(w):
        stored = response(w, "http://example.com/stored", body=chunked,
                          extra=[("Transfer-Encoding", "chunked")])
        spec = response(w, "http://example.com/spec", body=chunked,
                        extra=[("Transfer-Encoding", "chunked")])
        spec.rec_headers.replace_header("WARC-Payload-Digest", dechunked_digest)
        return [stored, spec]

    path = write_warc(tmp_path / "c.warc.gz", build)
    stored, spec = all_readers(path)
    # warcio's writer digests the body as stored, chunk framing included
    assert stored["declared_payload_digest"] == sha1_b32(chunked)
    assert stored["digest_verified"] is True
    # a digest over the de-chunked entity (as the WARC spec words it) also verifies
    assert spec["digest_verified"] is True
    for row in (stored, spec):
        assert row["payload_sha256"] == hashlib.sha256(chunked).hexdigest()
        assert row["payload_length"] == len(chunked)


def test_wrong_digest_is_false_not_an_error(tmp_path):
    def build(w):
        record = response(w, "http://example.com/", body=b"actual content")
        record.rec_headers.replace_header("WARC-Payload-Digest", sha1_b32(b"something else"))
        return [record]

    path = write_warc(tmp_path / "d.warc.gz", build)
    (row,) = all_readers(path)
    assert row["digest_verified"] is False
    assert row["error"] is None
    assert row["cdx_digest"] == sha1_b32(b"something else")  # as declared, like pywb


@pytest.mark.parametrize(
    ("encode", "verified"),
    [
        (lambda d: "sha1:" + base64.b32encode(hashlib.sha1(d).digest()).decode(), True),
        (lambda d: "sha1:" + base64.b32encode(hashlib.sha1(d).digest()).decode().lower(), True),
        (lambda d: "sha1:" + hashlib.sha1(d).hexdigest(), True),
        (lambda d: "SHA-1:" + base64.b64encode(hashlib.sha1(d).digest()).decode(), True),
        (lambda d: "sha1:" + base64.urlsafe_b64encode(hashlib.sha1(d).digest()).decode(), True),
        (lambda d: "sha256:" + hashlib.sha256(d).hexdigest(), True),
        (lambda d: "sha256:" + base64.b32encode(hashlib.sha256(d).digest()).decode(), True),
        (lambda d: "sha1:not-a-digest", False),
        (lambda d: "whirlpool-ng:ABCDEF", None),  # unknown algorithm: cannot check
    ],
)
def test_digest_encodings(tmp_path, encode, verified):
    body = b"payload bytes \xff\x00"

    def build(w):
        record = response(w, "http://example.com/", body=body)
        record.rec_headers.replace_header("WARC-Payload-Digest", encode(body))
        return [record]

    path = write_warc(tmp_path / "enc.warc.gz", build)
    (row,) = all_readers(path)
    assert row["digest_verified"] is verified


def test_resource_and_skipped_record_types(tmp_path):
    def build(w):
        return [
            w.create_warcinfo_record("x.warc", {"software": "test"}),
            w.create_warc_record("http://example.com/doc.pdf", "resource",
                                 payload=io.BytesIO(b"%PDF-1.7"),
                                 warc_content_type="application/pdf",
                                 warc_headers_dict={"WARC-Date": DATE}),
            w.create_warc_record("metadata://example.com/log", "metadata",
                                 payload=io.BytesIO(b"log"), warc_content_type="text/plain",
                                 warc_headers_dict={"WARC-Date": DATE}),
            w.create_warc_record("http://example.com/", "request",
                                 payload=io.BytesIO(b""), warc_headers_dict={"WARC-Date": DATE},
                                 http_headers=StatusAndHeaders("GET / HTTP/1.1", [("Host", "x")],
                                                               is_http_request=True)),
        ]

    path = write_warc(tmp_path / "types.warc.gz", build)
    (resource,) = all_readers(path)
    assert resource["record_type"] == "resource"
    assert resource["mime"] == "application/pdf"
    assert resource["http_status"] is None
    assert resource["digest_verified"] is True
    every = all_readers(path, all_records=True)
    assert [r["record_type"] for r in every] == ["warcinfo", "resource", "metadata", "request"]
    assert_replayable(path, every)


def test_post_request_body_goes_into_urlkey(tmp_path):
    def pair(w, url, mime, body):
        resp = response(w, url, body=b'{"ok": true}', mime="application/json")
        req = w.create_warc_record(
            url, "request", payload=io.BytesIO(body), length=len(body),
            http_headers=StatusAndHeaders(
                "POST /post HTTP/1.1",
                [("Content-Type", mime), ("Content-Length", str(len(body)))],
                is_http_request=True),
            warc_headers_dict={"WARC-Date": DATE,
                               "WARC-Concurrent-To": resp.rec_headers.get_header("WARC-Record-ID")})
        return [resp, req]

    path = write_warc(tmp_path / "post.warc.gz", lambda w: [
        *pair(w, "http://httpbin.org/post", "application/x-www-form-urlencoded", b"b=2&a=x+y"),
        *pair(w, "http://httpbin.org/post?q=1", "application/json",
              b'{"k": [1, 2], "n": {"k": 3}}'),
        *pair(w, "http://httpbin.org/upload", "application/octet-stream", b"\x00\x01\x02"),
    ])
    form, js, binary = all_readers(path)
    assert form["urlkey"] == "org,httpbin)/post?__wb_method=post&a=x%20y&b=2"
    assert js["urlkey"] == "org,httpbin)/post?__wb_method=post&k=1&k.2_=2&k.3_=3&q=1"
    assert binary["urlkey"] == "org,httpbin)/upload?__wb_method=post&__wb_post_data=aaec"
    assert form["target_uri"] == "http://httpbin.org/post"  # the URI itself is untouched


@pytest.mark.parametrize(
    ("mime", "body"),
    [
        ("application/x-www-form-urlencoded", b"a=1+2&b=%5B%5D&c=caf%C3%A9"),
        ("application/x-www-form-urlencoded", b"\xff\xfe"),
        ("application/json", b'{"a": {"b": [1, true, null]}, "a2": 1.5}'),
        ("application/json", b'{"a": 1}\n{"a": 2}'),
        ("application/json", b"broken"),
        ("text/plain", b'{"x": "y"}'),
        ("text/plain", b"plain words"),
        ("application/octet-stream", bytes(range(256))),
        (None, b"abc"),
        ("multipart/form-data", b"no boundary given"),
    ],
)
def test_post_query_matches_cdxj_indexer(mime, body):
    postquery = pytest.importorskip("cdxj_indexer.postquery")
    theirs = postquery.query_extract(mime, len(body), io.BytesIO(body), "http://x/")
    assert post_queries.post_query(mime, body) == theirs


def test_post_query_forms():
    form = b"a=1+2&b=%5B%5D"
    assert post_queries.post_query("application/x-www-form-urlencoded", form) == "a=1 2&b=[]"
    assert post_queries.post_query("application/json", b'{"a": {"b": [1, true]}}') \
        == "b=1&b.2_=True"
    assert post_queries.post_query("application/json", b"not json") == ""
    assert post_queries.post_query("text/plain", b"not json") == "__wb_post_data=bm90IGpzb24="
    multipart = (b"--XX\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nv 1\r\n"
                 b"--XX\r\nContent-Disposition: form-data; name=\"up\"; filename=\"a.bin\"\r\n"
                 b"Content-Type: application/octet-stream\r\n\r\n\x00\xff\r\n--XX--\r\n")
    assert post_queries.post_query("multipart/form-data; boundary=XX", multipart) \
        == "f=v+1&up=%00%FF"
    assert len(post_queries.post_query("application/octet-stream", b"z" * 10000)) == 4096


def test_odd_target_uris_are_cleaned(tmp_path):
    def build(w):
        a = response(w, "http://example.com/a")
        a.rec_headers.replace_header("WARC-Target-URI", "<http://example.com/wget>")
        b = response(w, "http://example.com/b")
        b.rec_headers.replace_header("WARC-Target-URI", "http://example.com/with space")
        return [a, b]

    path = write_warc(tmp_path / "u.warc.gz", build)
    wget, space = all_readers(path)
    assert wget["target_uri"] == "http://example.com/wget"
    assert space["target_uri"] == "http://example.com/with%20space"
    assert space["urlkey"] == "com,example)/with%20space"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2024-05-06T07:08:09Z", "20240506070809"),
        ("2024-05-06T07:08:09.123456Z", "20240506070809"),
        ("2024-05-06T09:08:09+02:00", "20240506070809"),
        ("2024-05-06T02:08:09-0500", "20240506070809"),
        ("2024-05-06T07:08:09", "20240506070809"),
        ("2024-05-06", "20240506000000"),
        ("2008-10-294T05:21:46-0700", None),  # ClueWeb09's WARC-Date
        ("2024-02-30T00:00:00Z", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_warc_date(raw, expected):
    parsed = dates.parse_warc_date(raw)
    assert (parsed.strftime("%Y%m%d%H%M%S") if parsed else None) == expected


def test_invalid_warc_date_is_reported(tmp_path):
    path = write_warc(tmp_path / "date.warc.gz", lambda w: [
        response(w, "http://example.com/", date="2024-13-45T99:00:00Z"),
    ])
    (row,) = all_readers(path)
    assert row["error"] == "invalid_warc_date"
    assert row["timestamp"] is None and row["capture_time"] is None
    assert row["warc_date_raw"] == "2024-13-45T99:00:00Z"
    assert list(to_cdxj_lines(index_file(path))) == []  # no timestamp, no CDXJ line


def test_decode_digest():
    assert digests.decode_digest("sha1:B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A")[0] == "sha1"
    assert digests.decode_digest("no-colon") == (None, None)
    assert digests.decode_digest("sha1:AAAA") == ("sha1", None)


# ---------------------------------------------------------------------------------------------
# HTTP header fast path == warcio's parser
# ---------------------------------------------------------------------------------------------

_visible = st.characters(min_codepoint=0x21, max_codepoint=0x7E)
_text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.just("\t"), max_size=30)
_line = st.builds(lambda first, rest: first + rest, _visible, _text)


@settings(max_examples=400, deadline=None)
@given(st.lists(_line, min_size=1, max_size=12))
def test_simple_header_parse_equals_warcio(lines):
    raw = ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")
    assert http_head.parse_simple_header_block(raw) == http_head.parse_header_block_with_warcio(raw)


@settings(max_examples=300, deadline=None)
@given(st.lists(_line, min_size=1, max_size=12), st.data())
def test_simple_header_lookup_equals_warcio(lines, data):
    """The lazy head finds each header as warcio's ``get_header`` does (first value, any case)."""
    raw = ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")
    fast = http_head.parse_simple_header_block(raw)
    slow = http_head.parse_header_block_with_warcio(raw)
    names = [line.split(":", 1)[0] for line in lines[1:]] + ["content-type", "x", ""]
    for name in names + [data.draw(st.sampled_from(names)).upper() + " "]:
        for variant in (name, name.lower(), name.swapcase(), name.strip()):
            assert fast.get_header(variant) == slow.get_header(variant), (raw, variant)
    assert bool(fast) == bool(slow)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_simple_header_parse_never_disagrees(raw):
    fast = http_head.parse_simple_header_block(raw)
    if fast is not None:
        assert fast == http_head.parse_header_block_with_warcio(raw)


# ---------------------------------------------------------------------------------------------
# CDXJ, index_paths, CLI, memory
# ---------------------------------------------------------------------------------------------


def test_cdxj_lines_format_and_order(tmp_path):
    path = write_warc(tmp_path / "x.warc.gz", lambda w: [
        response(w, "http://b.example.com/", date="2024-01-02T00:00:00Z"),
        response(w, "http://a.example.com/", status="302 Found", body=b"",
                 extra=[("Location", "/x")], date="2024-01-03T00:00:00Z"),
        response(w, "http://a.example.com/", date="2024-01-01T00:00:00Z"),
    ])
    table = index_file(path, name="x.warc.gz")
    lines = list(to_cdxj_lines(table))
    assert [line.split(" ", 2)[:2] for line in lines] == [
        ["com,example,a)/", "20240101000000"],
        ["com,example,a)/", "20240103000000"],
        ["com,example,b)/", "20240102000000"],
    ]
    entry = json.loads(lines[1].split(" ", 2)[2])
    assert list(entry) == ["url", "mime", "status", "digest", "length", "offset", "filename"]
    assert entry["status"] == "302" and entry["filename"] == "x.warc.gz"
    row = table.to_pylist()[1]
    assert entry["offset"] == str(row["offset"]) and entry["length"] == str(row["length"])


def test_index_paths_parallel_sorted_and_equal_to_serial(tmp_path):
    pairs = []
    for i in range(5):
        path = write_warc(tmp_path / f"p{i}.warc.gz", lambda w, i=i: [
            response(w, f"http://example.com/{i}/{j}") for j in range(i + 1)])
        pairs.append((path, f"dir/p{4 - i}.warc.gz"))
    parallel = index_paths(pairs, workers=2)
    serial = index_paths(pairs, workers=1)
    assert parallel.equals(serial)
    assert parallel.schema.equals(CAPTURE_SCHEMA)
    keys = list(zip(parallel.column("file").to_pylist(), parallel.column("offset").to_pylist(),
                    strict=True))
    assert keys == sorted(keys)
    assert parallel.num_rows == 15
    assert index_paths([]).num_rows == 0
    streamed = dict(iter_index_paths(pairs, workers=2))
    assert sorted(streamed) == sorted(name for _, name in pairs)
    assert streamed["dir/p0.warc.gz"].num_rows == 5  # largest file, p4, named p0


def test_unreadable_and_unsupported_files_become_rows(tmp_path):
    missing = tmp_path / "gone.warc.gz"
    (row,) = rows(missing)
    assert row["error"].startswith("unreadable_file")
    zstd = tmp_path / "x.warc.zst"
    zstd.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 20)
    (row,) = rows(zstd)
    assert row["error"] == "unsupported_compression: zstd"
    empty = tmp_path / "empty.warc"
    empty.write_bytes(b"")
    assert rows(empty) == []
    text = tmp_path / "notes.warc"
    text.write_bytes(b"just some text\nnot an archive\n")
    (row,) = rows(text)
    assert row["error"].startswith("unreadable_record: Unknown archive format")
    assert (row["offset"], row["length"]) == (0, 30)


def test_corrupt_gzip_member_is_skipped_and_reading_resumes(tmp_path):
    path = write_warc(tmp_path / "c.warc.gz", lambda w: [
        response(w, f"http://example.com/{i}", body=b"text " * 300) for i in range(4)])
    with open(path, "rb") as fh:
        it = ArchiveIterator(fh)
        offsets = [it.get_record_offset() for _ in it]
    data = bytearray(path.read_bytes())
    middle = (offsets[1] + offsets[2]) // 2
    data[middle: middle + 16] = bytes(16)
    path.write_bytes(bytes(data))
    result = all_readers(path, refused=True)
    assert [(r["offset"], r["error"]) for r in result] == [
        (offsets[0], None),
        (offsets[1], "corrupt_gzip_member"),
        (offsets[2], None),
        (offsets[3], None),
    ]
    assert result[1]["length"] == offsets[2] - offsets[1]


def test_whole_file_gzip_rows_point_at_the_single_member(tmp_path):
    plain = write_warc(tmp_path / "p.warc", lambda w: [
        response(w, "http://example.com/1"), response(w, "http://example.com/2")], gz=False)
    import gzip

    whole = tmp_path / "whole.warc.gz"
    whole.write_bytes(gzip.compress(plain.read_bytes()))
    result = all_readers(whole, refused=True)
    assert [(r["offset"], r["length"], r["error"]) for r in result] == [
        (0, whole.stat().st_size, "whole_file_gzip")] * 2
    assert [r["digest_verified"] for r in result] == [True, True]
    assert list(to_cdxj_lines(index_file(whole))) == []


@pytest.mark.parametrize("reader", ["warcio", "fastwarc"])
def test_memory_stays_flat_on_a_large_record(tmp_path, reader):
    def build(w):
        body = bytes(range(256)) * (24 * 4096)  # 24 MiB, highly compressible
        return [response(w, "http://example.com/big.bin", body=body,
                         mime="application/octet-stream")]

    path = write_warc(tmp_path / "big.warc.gz", build)
    tracemalloc.start()
    try:
        (row,) = rows(path, reader)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert row["payload_length"] == 24 * 1024 * 1024
    assert row["digest_verified"] is True
    assert peak < 4 * 1024 * 1024, f"peak {peak} bytes while hashing a 24 MiB payload"


def _cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="citeaudit")
    register_cli(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def test_cli_parquet_cdxj_and_errors(tmp_path, capsys):
    folder = tmp_path / "warcs" / "sub"
    folder.mkdir(parents=True)
    write_warc(folder / "one.warc.gz", lambda w: [response(w, "http://example.com/1")])
    write_warc(folder / "two.warc", lambda w: [response(w, "http://example.com/2")], gz=False)
    (folder / "ignored.txt").write_text("not an archive")

    out = tmp_path / "captures.parquet"
    assert _cli(["index-warc", str(tmp_path / "warcs"), "--out", str(out), "--workers", "1"]) == 0
    table = pq.read_table(out)
    assert table.schema.equals(CAPTURE_SCHEMA)
    assert sorted(table.column("file").to_pylist()) == ["sub/one.warc.gz", "sub/two.warc"]
    assert "2 rows from 2 file(s)" in capsys.readouterr().err

    assert _cli(["index-warc", str(folder / "one.warc.gz"), "--reader", "warcio"]) == 0
    captured = capsys.readouterr()
    (line,) = captured.out.splitlines()
    assert line.startswith("com,example)/1 20240506070809 {")
    assert json.loads(line.split(" ", 2)[2])["filename"] == str(folder / "one.warc.gz")

    assert _cli(["index-warc", str(tmp_path / "nope.warc")]) == 2
    assert "nope.warc" in capsys.readouterr().err
    assert _cli(["index-warc", str(folder), "--format", "parquet"]) == 2
    assert "--out" in capsys.readouterr().err
    assert _cli(["index-warc", str(tmp_path / "warcs" / "sub" / "..")]) == 0  # dir with ..
    capsys.readouterr()


def test_schema_is_the_documented_one():
    assert CAPTURE_SCHEMA.names[:6] == [
        "file", "offset", "length", "record_type", "target_uri", "urlkey"]
    assert CAPTURE_SCHEMA.field("capture_time").type == pa.timestamp("us", tz="UTC")
    assert CAPTURE_SCHEMA.field("http_status").type == pa.int32()
    assert CAPTURE_SCHEMA.names[-1] == "error"
