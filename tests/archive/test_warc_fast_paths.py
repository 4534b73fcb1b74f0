"""The indexer's fast paths give exactly what the general code they skip would give.

Three per-record shortcuts: the WARC header fields read from FastWARC's rendering of an
ASCII header block (else header by header), payloads hashed without the reading wrapper
when nothing else reads them, and the gzip member check reading the deflate stream after a
plain 10-byte gzip header directly. Each is compared with the general path here; the
golden pywb tests and the reader agreement tests check the rows end to end.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import random
import zlib
from pathlib import Path

import pytest
from fastwarc.warc import ArchiveIterator
from warcio.warcwriter import WARCWriter

from citeaudit.archive.index import digests, fastwarc_reader, slots


def _fields_one_by_one(headers, version: bytes) -> tuple[int, dict[str, str]]:
    """The reference: every header in turn, UTF-8 else Latin-1, first of a name wins."""
    fields: dict[str, str] = {}
    size = len(version) + 4
    for name, value in headers.items_bytes():
        size += len(name) + len(value) + 4
        key = slots.WANTED_HEADERS_BYTES.get(name.lower())
        if key is not None and key not in fields:
            try:
                fields[key] = value.decode("utf-8")
            except UnicodeDecodeError:
                fields[key] = value.decode("iso-8859-1")
    return size, fields


def _odd_headers_warc(path: Path) -> Path:
    """Records whose header blocks are not plain ASCII or repeat a name."""
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for extra in (
            {"WARC-Target-URI": "http://exämple.test/ü", "X-Note": "naïve"},
            {"WARC-Target-URI": "http://site.test/a", "Content-Type": "text/plain"},
            {"WARC-Target-URI": "http://site.test/b", "X-Empty": ""},
        ):
            record = writer.create_warc_record(
                extra["WARC-Target-URI"], "resource", payload=io.BytesIO(b"body"),
                warc_headers_dict={"WARC-Date": "2024-01-02T03:04:05Z", **extra})
            writer.write_record(record)
    raw = path.read_bytes()
    # a repeated header name: the first one must win on both paths
    member = gzip.compress(
        b"WARC/1.0\r\nWARC-Type: resource\r\nWARC-Type: metadata\r\n"
        b"WARC-Target-URI: http://site.test/c\r\nContent-Length: 0\r\n\r\n\r\n\r\n", mtime=0)
    path.write_bytes(raw + member)
    return path


def _warc_files(corpora: Path) -> list[Path]:
    return sorted(p for p in (corpora / "warc").rglob("*")
                  if p.is_file() and p.name.endswith((".warc", ".warc.gz")))


def test_header_fields_equal_header_by_header(corpora: Path, tmp_path: Path) -> None:
    files = [*_warc_files(corpora), _odd_headers_warc(tmp_path / "odd.warc.gz")]
    seen = non_ascii = 0
    for path in files:
        with path.open("rb") as fh:
            try:
                for record in ArchiveIterator(fh, parse_http=False):
                    headers = record.headers
                    version = headers.status_line_bytes or b""
                    assert fastwarc_reader._warc_fields(headers, version) == _fields_one_by_one(
                        headers, version), (path, record.stream_pos)
                    seen += 1
                    non_ascii += not str(headers).isascii()
            except OSError:  # FastWARC gives up on damaged files: what it read was compared
                pass
    assert seen > 500 and non_ascii >= 1
    fields = fastwarc_reader._warc_fields
    odd = {f["uri"]: f for f in (fields(r.headers, r.headers.status_line_bytes)[1]
                                 for r in ArchiveIterator(str(files[-1]), parse_http=False))}
    assert odd["http://site.test/c"]["type"] == "resource"
    assert "http://exämple.test/ü" in odd


@pytest.mark.parametrize("seed", range(6))
def test_hash_payload_equals_the_hashing_reader(seed: int) -> None:
    rng = random.Random(seed)
    payload = rng.randbytes(rng.choice((0, 1, 700, 65536, 65537, 200_000)))
    cut = rng.randint(0, len(payload))
    head, rest = payload[:cut], payload[cut:]

    fast = [hashlib.sha256(), hashlib.sha1()]
    size = digests.hash_payload(head, io.BytesIO(rest), fast)

    slow = [hashlib.sha256(), hashlib.sha1()]
    reader = digests.HashingReader(head, io.BytesIO(rest), [h.update for h in slow], None)
    reader.drain()
    assert size == reader.size == len(payload)
    assert [h.digest() for h in fast] == [h.digest() for h in slow]
    assert fast[0].digest() == hashlib.sha256(payload).digest()


def test_gzip_member_check_with_and_without_optional_header_fields(tmp_path: Path) -> None:
    record = b"WARC/1.0\r\nContent-Length: 0\r\n\r\n\r\n\r\n"
    plain = gzip.compress(record, mtime=0)
    named = io.BytesIO()
    with gzip.GzipFile(filename="name.warc", mode="wb", fileobj=named, mtime=0) as gz:
        gz.write(record)
    other = gzip.compress(b"HTTP/1.1 200 OK\r\n\r\n", mtime=0)
    broken = plain[:10] + b"\xff" * 20
    assert plain[2:4] == b"\x08\x00" and named.getvalue()[3] & 0x08  # FNAME set
    path = tmp_path / "members.bin"
    blobs = [plain, named.getvalue(), other, broken, b"not gzip at all"]
    path.write_bytes(b"".join(blobs))
    fd = os.open(path, os.O_RDONLY)
    try:
        starts = [sum(map(len, blobs[:i])) for i in range(len(blobs))]
        got = [slots.member_starts_record(fd, start) for start in starts]
    finally:
        os.close(fd)
    assert got == [True, True, False, False, False]
    with pytest.raises(zlib.error):
        zlib.decompressobj(-15).decompress(broken[10:], 5)
