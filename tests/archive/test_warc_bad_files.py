"""Every damaged or odd archive in ../shared/corpora/warc/: indexed without a crash.

Good records are indexed, bad ones come back as rows with a reason in ``error``. For each
file the exact outcome is stated: one tuple per row, ``(record_type, offset, length,
http_status, digest_verified, truncated, error)``, the number of CDXJ lines (rows pywb could
replay) and the reader "auto" ends up using (FastWARC refuses every damaged file).
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citeaudit.archive.index import CAPTURE_SCHEMA, index_file, to_cdxj_lines

# file: (rows, CDXJ lines, reader used by "auto", why)
EXPECTED = {
    "warcio/example-bad-non-chunked.warc.gz": (
        [
            ("response", 0, 2113, 200, True, False, "whole_file_gzip"),
            ("revisit", 0, 2113, 200, None, False, "whole_file_gzip"),
        ],
        0, "warcio",
        "whole-file gzip: one gzip member holds all six records, so no record has an offset "
        "of its own; every row points at the member (0, file size) and stays out of CDXJ",
    ),
    "warcio/example-bad.warc.gz.bad": (
        [
            ("response", 0, 1950, 200, True, False, "whole_file_gzip"),
            ("revisit", 0, 1950, 200, None, False, "whole_file_gzip"),
            ("response", 0, 1950, 302, True, False, "whole_file_gzip"),
        ],
        0, "warcio", "whole-file gzip (warcio's ArchiveIterator refuses it)",
    ),
    "pywb/warcs/example-bad.warc.gz.bad": (
        [
            ("response", 0, 1950, 200, True, False, "whole_file_gzip"),
            ("revisit", 0, 1950, 200, None, False, "whole_file_gzip"),
            ("response", 0, 1950, 302, True, False, "whole_file_gzip"),
        ],
        0, "warcio", "the same file in pywb's test data",
    ),
    "warcio/example-wrong-chunks.warc.gz": (
        [("response", 0, 1130, 200, True, False, "misaligned_gzip_member")],
        0, "warcio",
        "the response straddles two gzip members (0-516, 516-1130); it is read across them "
        "(digest verifies) but (offset, length) cannot be replayed; the GET request in the "
        "third member is not a capture",
    ),
    "warcio/example-trunc.warc": (
        [("response", 1197, 1363, 200, False, False, "content_length_mismatch")],
        1, "warcio",
        "Content-Length 973 stops 2 bytes before the record does: the 2 bytes left over are "
        "not the blank-line separator; the payload read is 604 of 606 bytes, so the digest "
        "fails; pywb/cdxj-indexer index the same (offset, length)",
    ),
    "warcio/example-digest.warc": (
        [], 0, "fastwarc",
        "four GET request records, none a capture (their digests: see the all_records test)",
    ),
    "warcio/bad.arc": (
        [
            ("response", 134, 67, None, None, False, "arc_missing_status;invalid_content_length"),
            ("response", 202, 59, None, None, False, "arc_missing_status"),
            ("response", 262, 68, None, None, False, "arc_missing_status;invalid_content_length"),
        ],
        3, "warcio",
        "ARC records with lengths -1, 1 and 'abc' and no HTTP status line; indexed like "
        "cdxj-indexer does (no status, no mime)",
    ),
    "pywb/warcs/bad.arc": (
        [
            ("response", 134, 67, None, None, False, "arc_missing_status;invalid_content_length"),
            ("response", 202, 59, None, None, False, "arc_missing_status"),
            ("response", 262, 68, None, None, False, "arc_missing_status;invalid_content_length"),
        ],
        3, "warcio", "the same file in pywb's test data",
    ),
    "resiliparse/clipped.warc.gz": (
        [("response", 0, 18184, 200, False, True, "truncated_record")],
        1, "warcio",
        "declares 88,275 bytes, the file ends after 75,207 (payload 74,970 bytes read)",
    ),
    "warcio/example-space-in-url.arc": (
        [("response", 151, 1722, 200, None, True, "truncated_record")],
        1, "warcio",
        "the ARC length (1591) is 12 bytes more than the file holds; the spaces in the URL "
        "are percent-encoded as warcio does",
    ),
    "resiliparse/block-sized-records.warc": (
        [], 0, "fastwarc", "three records of WARC-Type 'unknown': not captures",
    ),
    "resiliparse/block-sized-records.warc.gz": (
        [], 0, "fastwarc", "the same, gzip per record",
    ),
    "resiliparse/block-sized-records.warc.lz4": (
        [(None, 0, 720, None, None, None, "unsupported_compression: lz4")],
        0, None, "LZ4 frames: pywb and warcio cannot read or replay them",
    ),
    "resiliparse/warcfile.warc.lz4": (
        [(None, 0, 168143, None, None, None, "unsupported_compression: lz4")],
        0, None, "LZ4 frames",
    ),
    "pywb/warcs/example.warc": (
        [
            ("response", 460, 1987, 200, True, False, None),
            ("revisit", 3161, 896, 200, None, False, None),
            ("response", 4771, 854, 302, True, False, None),
        ],
        3, "warcio",
        "the second GET request has a wrong Content-Length (a stray line follows it): it "
        "is not a capture, so no row carries the error, but FastWARC refuses the file",
    ),
    "pywb/warcs/missing-status-text.warc": (
        [("response", 0, 485, 302, True, False, None)],
        1, "warcio",
        "'HTTP/1.0 302 ' without a reason phrase and CR CR LF line ends: status still 302",
    ),
    "pywb/warcs/example-extra.warc": (
        [
            ("response", 0, 1987, 200, True, False, None),
            ("revisit", 2701, 504, None, None, False, None),
            ("response", 3207, 1987, 200, False, False, None),
            ("revisit", 5910, 504, None, None, False, None),
        ],
        4, "fastwarc",
        "the second copy of the response (pywb's fixture for a bad capture) has a payload "
        "one byte shorter than the first copy's but declares the same digest: "
        "digest_verified False, a fact about the capture rather than an error",
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_file_outcome(corpora, name):
    rows, cdxj_lines, reader, _why = EXPECTED[name]
    table = index_file(corpora / "warc" / name, name=name.rsplit("/", 1)[-1])
    got = [
        (r["record_type"], r["offset"], r["length"], r["http_status"], r["digest_verified"],
         r["truncated"], r["error"])
        for r in table.to_pylist()
    ]
    assert got == rows
    assert len(list(to_cdxj_lines(table))) == cdxj_lines
    used = (table.schema.metadata or {}).get(b"citeaudit.reader")
    assert (used.decode() if used else None) == reader


def test_clueweb_invalid_warc_date_and_block_digest(corpora):
    """WARC/0.18 with WARC-Date '2008-10-294T05:21:46-0700' (day 294 of October).

    All 29 responses are indexed with status, mime and payload hash, but without a time
    (``invalid_warc_date``), so none can go into CDXJ. Their "payload" digest equals the
    block digest: ClueWeb09 digested the whole block, and it verifies over the block.
    """
    table = index_file(corpora / "warc/resiliparse/clueweb-quirk.warc.gz")
    summary = Counter(
        (r["record_type"], r["http_status"], r["digest_verified"], r["error"], r["timestamp"],
         r["warc_date_raw"], r["mime"])
        for r in table.to_pylist()
    )
    assert summary == Counter({
        ("response", 200, True, "invalid_warc_date", None, "2008-10-294T05:21:46-0700",
         "text/html"): 29
    })
    assert list(to_cdxj_lines(table)) == []


def test_example_digest_all_records(corpora):
    """The first request's payload digest is wrong; the others spell the (right) SHA-1 of
    the empty payload in base64 and base64url, which are decoded and verified too."""
    table = index_file(corpora / "warc/warcio/example-digest.warc", all_records=True)
    got = [(r["record_type"], r["offset"], r["declared_payload_digest"], r["digest_verified"],
            r["error"]) for r in table.to_pylist()]
    assert got == [
        ("request", 0, "sha1:1112H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", False, None),
        ("request", 922, "sha1:2jmj7l5rSw0yVb/vlWAYkK/YBwk=", True, None),
        ("request", 1840, "sha1:2jmj7l5rSw0yVb/vlWAYkK/YBwk=", True, None),
        ("request", 2758, "sha1:2jmj7l5rSw0yVb_vlWAYkK_YBwk=", True, None),
    ]


def test_unknown_record_types_with_all_records(corpora):
    for suffix, spans in ((".warc", [(0, 16382), (16386, 16382), (32772, 16382)]),
                          (".warc.gz", [(0, 204), (204, 205), (409, 205)])):
        table = index_file(corpora / f"warc/resiliparse/block-sized-records{suffix}",
                           all_records=True)
        assert [(r["record_type"], r["offset"], r["length"], r["payload_length"], r["error"])
                for r in table.to_pylist()] == [("unknown", o, n, 16229, None) for o, n in spans]


def test_whole_batch_of_bad_files_does_not_stop(corpora):
    """index_paths over every file above, 2 workers: one table, nothing lost."""
    from citeaudit.archive.index import index_paths

    pairs = [(corpora / "warc" / name, name) for name in EXPECTED]
    table = index_paths(pairs, workers=2)
    expected_rows = sum(len(rows) for rows, *_ in EXPECTED.values())
    assert table.num_rows == expected_rows
    assert set(table.column("file").to_pylist()) == {
        name for name, (rows, *_rest) in EXPECTED.items() if rows
    }


# ---------------------------------------------------------------------------------------------
# damage of any kind: never an exception, always rows that point inside the file
# ---------------------------------------------------------------------------------------------

_SOURCES = ["warcio/example.warc.gz", "warcio/example.warc", "pywb/warcs/example.arc",
            "warcio/post-test.warc.gz"]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    source=st.sampled_from(_SOURCES),
    cuts=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 40), st.binary(max_size=12)),
                  max_size=4),
    keep=st.floats(0.05, 1),
)
def test_random_damage_never_raises(corpora, tmp_path_factory, source, cuts, keep):
    data = bytearray((corpora / "warc" / source).read_bytes())
    for where, drop, insert in cuts:  # overwrite/delete/insert bytes at random places
        at = int(where * len(data))
        data[at: at + drop] = insert
    data = bytes(data[: max(1, int(len(data) * keep))])
    path = tmp_path_factory.mktemp("damaged") / source.rsplit("/", 1)[-1]
    path.write_bytes(data)
    for reader in ("auto", "warcio", "fastwarc"):
        table = index_file(path, reader=reader, all_records=True)
        assert table.schema.equals(CAPTURE_SCHEMA)
        for row in table.to_pylist():
            assert 0 <= row["offset"] <= len(data)
            if row["length"] is not None:
                assert 0 <= row["offset"] + row["length"] <= len(data)
        list(to_cdxj_lines(table))
