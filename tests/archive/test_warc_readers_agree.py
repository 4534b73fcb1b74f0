"""FastWARC and warcio give identical capture rows on every archive in ../shared/corpora/warc/.

FastWARC is only used where its framing checks prove its offsets and lengths are warcio's
(see ``citeaudit.archive.index.readers.fastwarc_slots``). On the files listed in FASTWARC_REFUSES it
refuses, for the reason given, and "auto" falls back to warcio; on every other file the two
readers must agree on every column of every row, with and without ``all_records``.
"""

from __future__ import annotations

import pytest

from citeaudit.archive.index import index_file

FASTWARC_REFUSES = {
    # file: (start of the refusal reason, what is wrong)
    "pywb/warcs/bad.arc": ("not a WARC file", "ARC: FastWARC reads WARC only"),
    "pywb/warcs/example.arc": ("not a WARC file", "ARC"),
    "pywb/warcs/example.arc.gz": ("not a WARC file", "ARC"),
    "warcio/bad.arc": ("not a WARC file", "ARC"),
    "warcio/example.arc": ("not a WARC file", "ARC"),
    "warcio/example.arc.gz": ("not a WARC file", "ARC"),
    "warcio/example-space-in-url.arc": ("not a WARC file", "ARC"),
    "pywb/warcs/example-bad.warc.gz.bad": (
        "gzip member at 0 does not hold exactly one record", "whole-file gzip"),
    "warcio/example-bad.warc.gz.bad": (
        "gzip member at 0 does not hold exactly one record", "whole-file gzip"),
    "warcio/example-bad-non-chunked.warc.gz": (
        "gzip member at 0 does not hold exactly one record", "whole-file gzip"),
    "warcio/example-wrong-chunks.warc.gz": (
        "gzip member at 0 does not hold exactly one record", "record straddles members"),
    "resiliparse/clipped.warc.gz": (
        "record at 0 shorter than its Content-Length", "truncated"),
    "warcio/example-trunc.warc": ("Invalid WARC header", "wrong Content-Length"),
    "pywb/warcs/example.warc": ("Invalid WARC header", "wrong Content-Length (a request)"),
    "pywb/warcs/missing-status-text.warc": (
        "WARC header at 0 not written canonically", "CR CR LF line ends"),
}

NOT_READ_AT_ALL = {
    # neither reader gets to see these: compression sniffed before reading
    "resiliparse/block-sized-records.warc.lz4",
    "resiliparse/warcfile.warc.lz4",
}


def archive_names(corpora) -> list[str]:
    return sorted(
        p.relative_to(corpora / "warc").as_posix()
        for p in (corpora / "warc").rglob("*")
        if p.is_file() and p.parent.name not in ("cdx", "cdxj", "waczs")
    )


def test_every_archive_is_classified(corpora):
    names = set(archive_names(corpora))
    assert set(FASTWARC_REFUSES) <= names
    assert names >= NOT_READ_AT_ALL
    # everything else is read by both readers (checked below): 24 files
    assert len(names - set(FASTWARC_REFUSES) - NOT_READ_AT_ALL) == 24


CORPUS_FILES = [
    # every archive file in the corpora, listed so the parametrized ids are stable
    "pywb/warcs/bad.arc", "pywb/warcs/dupes.warc.gz", "pywb/warcs/example-bad.warc.gz.bad",
    "pywb/warcs/example-extra.warc", "pywb/warcs/example-url-agnostic-orig.warc.gz",
    "pywb/warcs/example-url-agnostic-revisit.warc.gz", "pywb/warcs/example-wget-1-14.warc.gz",
    "pywb/warcs/example-wpull.warc.gz", "pywb/warcs/example.arc", "pywb/warcs/example.arc.gz",
    "pywb/warcs/example.warc", "pywb/warcs/example.warc.gz", "pywb/warcs/example2.warc.gz",
    "pywb/warcs/httpbin-resource.warc.gz", "pywb/warcs/iana.warc.gz",
    "pywb/warcs/missing-status-text.warc", "pywb/warcs/post-test.warc.gz",
    "resiliparse/block-sized-records.warc", "resiliparse/block-sized-records.warc.gz",
    "resiliparse/block-sized-records.warc.lz4", "resiliparse/clipped.warc.gz",
    "resiliparse/clueweb-quirk.warc.gz", "resiliparse/warcfile.warc",
    "resiliparse/warcfile.warc.gz", "resiliparse/warcfile.warc.lz4", "warcio/bad.arc",
    "warcio/example-bad-non-chunked.warc.gz", "warcio/example-bad.warc.gz.bad",
    "warcio/example-digest.warc", "warcio/example-iana.org-chunked.warc",
    "warcio/example-resource.warc.gz", "warcio/example-space-in-target-uri.warc.gz",
    "warcio/example-space-in-url.arc", "warcio/example-trunc.warc",
    "warcio/example-wget-bad-target-uri.warc.gz", "warcio/example-wrong-chunks.warc.gz",
    "warcio/example.arc", "warcio/example.arc.gz", "warcio/example.warc",
    "warcio/example.warc.gz", "warcio/post-test.warc.gz",
]


def test_corpus_file_list_is_complete(corpora):
    assert archive_names(corpora) == CORPUS_FILES


def _metadata(table) -> dict[str, str]:
    return {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}


@pytest.mark.parametrize("all_records", [False, True], ids=["captures", "all_records"])
@pytest.mark.parametrize("name", CORPUS_FILES)
def test_readers_agree(corpora, name, all_records):
    path = corpora / "warc" / name
    warcio = index_file(path, name=name, reader="warcio", all_records=all_records)
    fastwarc = index_file(path, name=name, reader="fastwarc", all_records=all_records)
    auto = index_file(path, name=name, reader="auto", all_records=all_records)
    plain = [t.replace_schema_metadata(None) for t in (warcio, fastwarc, auto)]

    if name in NOT_READ_AT_ALL:
        assert plain[0].equals(plain[1]) and plain[0].equals(plain[2])
        (row,) = warcio.to_pylist()
        assert row["error"] == "unsupported_compression: lz4"
        return

    assert plain[2].equals(plain[0]), "auto must give warcio's rows"
    if name in FASTWARC_REFUSES:
        reason, _what = FASTWARC_REFUSES[name]
        (row,) = fastwarc.to_pylist()
        assert row["error"].startswith(f"fastwarc_refused: {reason}")
        meta = _metadata(auto)
        assert meta["citeaudit.reader"] == "warcio"
        assert meta["citeaudit.fallback_reason"].startswith(reason)
    else:
        assert plain[1].equals(plain[0]), "fastwarc and warcio rows differ"
        assert _metadata(auto) == {"citeaudit.reader": "fastwarc"}
