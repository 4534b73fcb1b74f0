"""Golden tests: our CDXJ against pywb's own indexes and against cdxj-indexer.

pywb ships indexes of its test WARCs (``../shared/corpora/warc/pywb/cdxj/`` and ``cdx/``);
cdxj-indexer (Webrecorder's current indexer, installed) is run here on the same files. Our
index must agree with them on urlkey, timestamp, status, digest, offset and length for every
line. Every place where it does not is listed below as expected-difference data, with the
reason; a difference not listed fails the test, and so does a listed one that went away.
"""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from citeaudit.archive.index import index_file, to_cdxj_lines

FIELDS = ("urlkey", "timestamp", "status", "digest", "offset", "length", "mime")


def parse_index(path: Path) -> list[dict]:
    """pywb CDXJ or legacy CDX 11 (`` CDX N b a m s k r M S V g``) lines as dicts."""
    out = []
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith(" CDX"):
            continue
        key, ts, rest = line.split(" ", 2)
        if rest.startswith("{"):
            entry = json.loads(rest)
        else:
            names = ("url", "mime", "status", "digest", "redirect", "meta", "length", "offset",
                     "filename")
            entry = {k: v for k, v in zip(names, rest.split(" "), strict=True) if v != "-"}
        entry["urlkey"], entry["timestamp"] = key, ts
        out.append(entry)
    return out


def our_lines(warc_dir: Path, filenames: list[str]) -> list[dict]:
    entries = []
    for name in filenames:
        table = index_file(warc_dir / name, name=name)
        for line in to_cdxj_lines(table):
            key, ts, rest = line.split(" ", 2)
            entries.append({**json.loads(rest), "urlkey": key, "timestamp": ts})
    return entries


def bare_digest(value: str | None) -> str | None:
    """pywb's index drops the ``sha1:`` prefix that the WARC (and cdxj-indexer) keep."""
    return value.split(":", 1)[-1] if value else value


def run_cdxj_indexer(path: Path, **opts) -> list[str]:
    main = pytest.importorskip("cdxj_indexer.main")

    class Keep(io.StringIO):
        def close(self) -> None:  # cdxj-indexer closes its output
            pass

    out = Keep()
    with contextlib.redirect_stderr(io.StringIO()):
        main.write_cdx_index(out, [str(path)], {"sort": True, **opts})
    return out.getvalue().splitlines()


# ---------------------------------------------------------------------------------------------
# iana.warc.gz and dupes.warc.gz: every line
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("index", "lines", "revisits"),
    [("cdxj/iana.cdxj", 171, 123), ("cdx/iana.cdx", 171, 123),
     ("cdxj/dupes.cdxj", 12, 9), ("cdx/dupes.cdx", 12, 9)],
)
def test_iana_and_dupes_agree_with_pywb_line_by_line(corpora, index, lines, revisits):
    pywb = corpora / "warc" / "pywb"
    theirs = parse_index(pywb / index)
    ours = our_lines(pywb / "warcs", sorted({e["filename"] for e in theirs}))
    assert len(theirs) == len(ours) == lines
    seen_revisits = 0
    for mine, pywbs in zip(ours, theirs, strict=True):  # same order: pywb sorts as we do
        for name in ("urlkey", "timestamp", "offset", "length", "filename", "url"):
            assert mine[name] == pywbs[name], (name, pywbs)
        assert bare_digest(mine["digest"]) == pywbs["digest"]
        if pywbs.get("mime") == "warc/revisit":
            seen_revisits += 1
            # pywb's shipped index leaves a revisit's status out; we (like the current
            # cdxj-indexer) repeat the status of the HTTP headers the revisit carries
            assert "status" not in pywbs and mine["status"] == "200"
        else:
            assert mine["status"] == pywbs["status"]
        if pywbs.get("mime") == "unk":
            # pywb writes "unk" for a response without Content-Type (the 302 in dupes);
            # we leave mime out, as cdxj-indexer does
            assert "mime" not in mine
        else:
            assert mine["mime"] == pywbs["mime"]
    assert seen_revisits == revisits


@pytest.mark.parametrize("name", ["iana.warc.gz", "dupes.warc.gz"])
def test_iana_and_dupes_byte_identical_to_cdxj_indexer(corpora, name):
    path = corpora / "warc" / "pywb" / "warcs" / name
    theirs = run_cdxj_indexer(path)
    ours = list(to_cdxj_lines(index_file(path, name=name)))
    assert ours == theirs
    assert len(ours) == {"iana.warc.gz": 171, "dupes.warc.gz": 12}[name]


# ---------------------------------------------------------------------------------------------
# every WARC/ARC in the corpora against cdxj-indexer
# ---------------------------------------------------------------------------------------------

CDXJ_INDEXER_FILES = {
    # file: how our CDXJ relates to cdxj-indexer's (default options, sorted)
    "pywb/warcs/bad.arc": "identical",
    "pywb/warcs/dupes.warc.gz": "identical",
    "pywb/warcs/example-extra.warc": "identical",
    "pywb/warcs/example-url-agnostic-orig.warc.gz": "identical",
    "pywb/warcs/example-url-agnostic-revisit.warc.gz": "identical",
    "pywb/warcs/example-wget-1-14.warc.gz": "identical",
    "pywb/warcs/example-wpull.warc.gz": "identical",
    "pywb/warcs/example.arc": "identical",
    "pywb/warcs/example.arc.gz": "identical",
    "pywb/warcs/example.warc": "identical",
    "pywb/warcs/example.warc.gz": "identical",
    "pywb/warcs/example2.warc.gz": "identical",
    "pywb/warcs/httpbin-resource.warc.gz": "identical",
    "pywb/warcs/iana.warc.gz": "identical",
    "pywb/warcs/missing-status-text.warc": "identical",
    "pywb/warcs/post-test.warc.gz": "post keys",
    "warcio/post-test.warc.gz": "post keys",
    "resiliparse/block-sized-records.warc": "identical",
    "resiliparse/block-sized-records.warc.gz": "identical",
    "resiliparse/clipped.warc.gz": "identical",
    "resiliparse/warcfile.warc": "identical",
    "resiliparse/warcfile.warc.gz": "identical",
    "warcio/bad.arc": "identical",
    "warcio/example-digest.warc": "identical",
    "warcio/example-iana.org-chunked.warc": "identical",
    "warcio/example-resource.warc.gz": "identical",
    "warcio/example-space-in-target-uri.warc.gz": "identical",
    "warcio/example-space-in-url.arc": "identical",
    "warcio/example-trunc.warc": "identical",
    "warcio/example-wget-bad-target-uri.warc.gz": "metadata record",
    "warcio/example.arc": "identical",
    "warcio/example.arc.gz": "identical",
    "warcio/example.warc": "identical",
    "warcio/example.warc.gz": "identical",
    # cdxj-indexer stops with an exception on these; we index what can be indexed
    "pywb/warcs/example-bad.warc.gz.bad": "cdxj-indexer fails",
    "warcio/example-bad-non-chunked.warc.gz": "cdxj-indexer fails",
    "warcio/example-bad.warc.gz.bad": "cdxj-indexer fails",
    "warcio/example-wrong-chunks.warc.gz": "cdxj-indexer fails",
    "resiliparse/clueweb-quirk.warc.gz": "cdxj-indexer fails",
    "resiliparse/block-sized-records.warc.lz4": "cdxj-indexer fails",
    "resiliparse/warcfile.warc.lz4": "cdxj-indexer fails",
}


def test_list_covers_every_archive_in_the_corpora(corpora):
    found = {
        p.relative_to(corpora / "warc").as_posix()
        for p in (corpora / "warc").rglob("*")
        if p.is_file() and p.parent.name not in ("cdx", "cdxj", "waczs")
    }
    assert found == set(CDXJ_INDEXER_FILES)


def _strip_request_fields(line: str) -> str:
    key, ts, rest = line.split(" ", 2)
    entry = json.loads(rest)
    entry.pop("method", None)
    entry.pop("requestBody", None)
    return f"{key} {ts} {json.dumps(entry)}"


@pytest.mark.parametrize("name", sorted(CDXJ_INDEXER_FILES))
def test_every_archive_against_cdxj_indexer(corpora, name):
    path = corpora / "warc" / name
    relation = CDXJ_INDEXER_FILES[name]
    ours = list(to_cdxj_lines(index_file(path, name=path.name)))
    if relation == "cdxj-indexer fails":
        with pytest.raises(Exception):  # noqa: B017 - ArchiveLoadFailed or ValueError
            run_cdxj_indexer(path)
        # whole-file gzip, straddling members, LZ4, and ClueWeb's impossible dates leave no
        # line pywb could replay; the rows themselves are checked in test_warc_bad_files
        assert ours == []
        return
    theirs = run_cdxj_indexer(path)
    if relation == "identical":
        assert ours == theirs
    elif relation == "post keys":
        # By default cdxj-indexer keys POST responses by URL alone; pywb (and cdxj-indexer
        # --post-append) add the request body: org,httpbin)/post?__wb_method=post&foo=bar...
        # With --post-append the lines are ours plus "method" and "requestBody" fields.
        posted = [_strip_request_fields(line)
                  for line in run_cdxj_indexer(path, post_append=True)]
        assert ours == sorted(posted)
        assert [line.split(" ", 1)[0] for line in ours] == [
            "org,httpbin)/post?__wb_method=post&a=1&b=[]&c=3",
            "org,httpbin)/post?__wb_method=post&data=^&foo=bar",
            "org,httpbin)/post?__wb_method=post&foo=bar&test=abc",
        ]
        assert [line.split(" ", 1)[0] for line in theirs] == [
            "org,httpbin)/post", "org,httpbin)/post", "org,httpbin)/post?foo=bar"]
    elif relation == "metadata record":
        # cdxj-indexer also indexes 'metadata' records (here wget's MANIFEST.txt); the
        # capture index leaves metadata records out by design
        (extra,) = sorted(set(theirs) - set(ours))
        assert extra.startswith("org,gnu)/software/wget/warc/manifest.txt ")
        assert sorted(set(ours) - set(theirs)) == []
    else:  # pragma: no cover
        raise AssertionError(relation)


# ---------------------------------------------------------------------------------------------
# the other pywb indexes, with every difference stated
# ---------------------------------------------------------------------------------------------


@dataclass
class Expected:
    """How one of pywb's index files differs from ours, and why."""

    why: str
    revisit_status: int = 0  # revisits where pywb has no status and we have the HTTP one
    fields_pywb_leaves_out: dict[tuple[str, int], set[str]] = field(default_factory=dict)
    mime_unk: set[tuple[str, int]] = field(default_factory=set)
    urlkeys: dict[tuple[str, int], str] = field(default_factory=dict)  # pywb's urlkey
    only_ours: set[tuple[str, int]] = field(default_factory=set)


OTHER_INDEXES = {
    "cdxj/example.cdxj": Expected(
        "pywb fixture with mime and status left out of the two non-revisit lines",
        fields_pywb_leaves_out={("example.warc.gz", 333): {"mime", "status"},
                                ("example.warc.gz", 2907): {"mime", "status"}},
        revisit_status=1),
    "cdxj/example-no-digest.cdxj": Expected(
        "pywb fixture of example.warc.gz with no digests (and no mime/status but the "
        "revisit's mime)",
        fields_pywb_leaves_out={("example.warc.gz", 333): {"mime", "status", "digest"},
                                ("example.warc.gz", 1864): {"digest"},
                                ("example.warc.gz", 2907): {"mime", "status", "digest"}},
        revisit_status=1),
    "cdxj/example2.cdxj": Expected(
        "none: the WARC declares a hex SHA-1 (sha1:37cf167c...) instead of base32; pywb and "
        "we both keep it as written (and we verify it)"),
    "cdxj/post-test.cdxj": Expected("none: POST bodies in __wb_method=post keys, as pywb"),
    "cdx/post-test.cdx": Expected("none: POST bodies in __wb_method=post keys, as pywb"),
    "cdx/httpbin-resource.cdxj": Expected("none: a resource record"),
    "cdx/missing-status-text.cdxj": Expected(
        "302 without Content-Type: pywb writes mime 'unk', we leave it out",
        mime_unk={("missing-status-text.warc", 0)}),
    "cdx/example.cdx": Expected("revisit status only", revisit_status=1),
    "cdxj/url-agnost-example.cdxj": Expected(
        "URL-agnostic revisit (http://test@example.com/ refers to http://example.iana.org/): "
        "keyed by its own URL, as pywb; only its status differs", revisit_status=1),
    "cdx/url-agnost-example.cdx": Expected(
        "the same, legacy CDX", revisit_status=1),
    "cdx/example-arc-test.cdx": Expected(
        "pywb fixture with hand-made urlkeys that tell its two ARC files apart",
        urlkeys={("example.arc", 151): "com,example,test,arc)/",
                 ("example.arc.gz", 171): "com,example,test,gz,arc)/"}),
    "cdx/example-extra.cdx": Expected(
        "pywb's fixture lists the first response and revisit only; the file holds a second, "
        "altered copy of both (the response's digest fails: see test_warc_bad_files)",
        only_ours={("example-extra.warc", 3207), ("example-extra.warc", 5910)}),
}


def _compare(theirs: list[dict], ours: list[dict], expected: Expected) -> None:
    mine = {(e["filename"], int(e["offset"])): e for e in ours}
    assert len(mine) == len(ours)
    matched = set()
    revisit_status = 0
    for entry in theirs:
        key = (entry["filename"], int(entry["offset"]))
        assert key in mine, f"pywb line not in ours: {entry}"
        matched.add(key)
        our = mine[key]
        left_out = expected.fields_pywb_leaves_out.get(key, set())
        for name in FIELDS:
            pywb_value = entry.get(name)
            our_value = our.get(name)
            if name == "digest":
                our_value = bare_digest(our_value)
                pywb_value = bare_digest(pywb_value)
            if name in left_out:
                assert pywb_value is None and our_value is not None
            elif (name == "status" and entry.get("mime") == "warc/revisit"
                  and pywb_value is None and our_value is not None):
                assert our_value == "200"
                revisit_status += 1
            elif name == "mime" and key in expected.mime_unk:
                assert (pywb_value, our_value) == ("unk", None)
            elif name == "urlkey" and key in expected.urlkeys:
                assert pywb_value == expected.urlkeys[key] != our_value
            else:
                assert our_value == pywb_value, (name, entry, our)
    assert revisit_status == expected.revisit_status
    assert set(mine) - matched == expected.only_ours


@pytest.mark.parametrize("index", sorted(OTHER_INDEXES))
def test_other_pywb_indexes_with_stated_differences(corpora, index):
    pywb = corpora / "warc" / "pywb"
    theirs = parse_index(pywb / index)
    ours = our_lines(pywb / "warcs", sorted({e["filename"] for e in theirs}))
    _compare(theirs, ours, OTHER_INDEXES[index])


def test_pywb_bad_cdx_is_a_deliberately_wrong_fixture(corpora):
    """cdx/bad.cdx is pywb's fixture of wrong entries: a non-existent.warc, and lines for
    example-extra.warc with an altered digest (...36B), timestamp (...0351) and urlkey
    (?example=3). None of its lines may match a line of ours."""
    pywb = corpora / "warc" / "pywb"
    theirs = parse_index(pywb / "cdx" / "bad.cdx")
    assert {e["filename"] for e in theirs} == {"example-extra.warc", "non-existent.warc"}
    ours = our_lines(pywb / "warcs", ["example-extra.warc"])

    def key(entry: dict) -> tuple:
        return (entry["urlkey"], entry["timestamp"], bare_digest(entry["digest"]),
                entry["offset"], entry["length"])

    assert not {key(e) for e in theirs} & {key(e) for e in ours}


def test_cdxj_indexes_of_every_pywb_fixture_are_covered(corpora):
    pywb = corpora / "warc" / "pywb"
    indexes = {p.relative_to(pywb).as_posix() for p in pywb.glob("cdx*/*.cdx*")}
    covered = set(OTHER_INDEXES) | {"cdx/bad.cdx", "cdxj/iana.cdxj", "cdx/iana.cdx",
                                    "cdxj/dupes.cdxj", "cdx/dupes.cdx"}
    # example.cdx.gz is a compressed (zipnum) block of example.cdxj, not an index to compare
    assert indexes - covered == {"cdxj/example.cdx.gz"}
    assert covered <= indexes


def test_example2_hex_digest_is_verified(corpora):
    (row,) = index_file(corpora / "warc/pywb/warcs/example2.warc.gz").to_pylist()
    assert row["declared_payload_digest"] == "sha1:37cf167c2672a4a64af901d9484e75eee0e2c98a"
    assert row["digest_verified"] is True
