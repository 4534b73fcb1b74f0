"""WACZ input: the valid and invalid examples of pywb's test data, WACZs written here (stored
members, WACZ 1.1 hashes), a hash mismatch, a deflated member; rows with offsets valid in the
.wacz itself, read back by the same reader the alignment uses."""

from __future__ import annotations

import hashlib
import json
import zipfile
from io import BytesIO
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from citeaudit.alignment.payload_text import read_payload
from citeaudit.archive.index import index_file, index_paths
from citeaudit.ingest.raw_check import ignored_inputs
from citeaudit.layout import warc_files


@pytest.fixture(scope="module")
def examples(corpora: Path) -> Path:
    folder = corpora / "warc" / "pywb" / "waczs"
    if not (folder / "valid_example_1.wacz").is_file():
        pytest.skip(f"{folder} is absent")
    return folder


def warc_bytes(pages: dict[str, bytes]) -> bytes:
    buf = BytesIO()
    w = WARCWriter(buf, gzip=True, warc_version="WARC/1.1")
    for url, body in pages.items():
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        date = {"WARC-Date": "2026-11-02T10:00:00Z"}
        w.write_record(w.create_warc_record(url, "response", payload=BytesIO(body),
                                            http_headers=http, warc_headers_dict=date))
    return buf.getvalue()


def make_wacz(path: Path, members: dict[str, bytes], *, tamper: str | None = None,
              deflate: bool = False) -> Path:
    """A WACZ 1.1 (stored members, ``sha256:`` hashes); ``tamper`` names a member whose
    declared hash is wrong."""
    resources = []
    for name, data in members.items():
        digest = hashlib.sha256(data + (b"x" if name == tamper else b"")).hexdigest()
        resources.append({"name": Path(name).name, "path": name, "hash": f"sha256:{digest}",
                          "bytes": len(data)})
    package = {"profile": "data-package", "wacz_version": "1.1.1", "resources": resources}
    method = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(zipfile.ZipInfo(name), data, compress_type=method)
        zf.writestr("datapackage.json", json.dumps(package), compress_type=zipfile.ZIP_DEFLATED)
    return path


def test_valid_example_rows_point_into_the_wacz(examples: Path, tmp_path: Path) -> None:
    wacz = examples / "valid_example_1.wacz"
    rows = index_file(wacz, name="x.wacz").to_pylist()
    responses = [r for r in rows if r["record_type"] == "response"]
    assert [r["error"] for r in rows] == [None] * len(rows)
    assert [(r["target_uri"], r["http_status"]) for r in responses] == [
        ("http://www.example.com/", 200)]
    # the member alone, indexed as a WARC, gives the same rows shifted by the member's start
    with zipfile.ZipFile(wacz) as zf:
        member = zf.read("archive/example-collection.warc")
    alone = tmp_path / "member.warc"
    alone.write_bytes(member)
    base = index_file(alone, name="x.wacz").to_pylist()
    start = wacz.read_bytes().index(member)
    assert [r["offset"] - start for r in rows] == [r["offset"] for r in base]
    assert [{k: v for k, v in r.items() if k != "offset"} for r in rows] == \
        [{k: v for k, v in r.items() if k != "offset"} for r in base]
    # the alignment's reader opens the record at that offset in the .wacz itself
    body, ctype, _enc, err = read_payload(wacz, responses[0]["offset"])
    assert err is None and ctype.startswith("text/html") and b"Example Domain" in body
    # pywb's own index in the WACZ agrees on the record's offset inside the member
    import gzip
    with zipfile.ZipFile(wacz) as zf:
        cdx = gzip.decompress(zf.read("indexes/index.cdx.gz")).decode()
    assert f'"offset": "{responses[0]["offset"] - start}"' in cdx


def test_invalid_example_is_rejected_with_its_reason(examples: Path) -> None:
    rows = index_file(examples / "invalid_example_1.wacz", name="bad.wacz").to_pylist()
    assert len(rows) == 1
    assert rows[0]["error"].startswith("invalid_wacz: ")
    assert "data/indexes/index.cdx.gz" in rows[0]["error"]


def test_written_wacz_hash_mismatch_and_deflated(tmp_path: Path) -> None:
    warc = warc_bytes({"http://a.test/": b"<p>a</p>", "http://b.test/": b"<p>b</p>"})
    pages = b'{"format": "json-pages-1.0"}\n'
    good = make_wacz(tmp_path / "good.wacz", {"archive/data.warc.gz": warc,
                                              "pages/pages.jsonl": pages})
    rows = index_file(good, name="good.wacz").to_pylist()
    assert sorted(r["target_uri"] for r in rows) == ["http://a.test/", "http://b.test/"]
    for r in rows:
        body, _c, _e, err = read_payload(good, r["offset"])
        assert err is None and body == (b"<p>a</p>" if "a.test" in r["target_uri"] else b"<p>b</p>")

    bad = make_wacz(tmp_path / "bad.wacz", {"archive/data.warc.gz": warc,
                                            "pages/pages.jsonl": pages},
                    tamper="archive/data.warc.gz")
    rows = index_file(bad, name="bad.wacz").to_pylist()
    assert len(rows) == 1 and rows[0]["record_type"] is None
    assert rows[0]["error"].startswith("invalid_wacz: archive/data.warc.gz: sha256 ")
    assert "does not match" in rows[0]["error"]

    deflated = make_wacz(tmp_path / "deflated.wacz", {"archive/data.warc.gz": warc},
                         deflate=True)
    rows = index_file(deflated, name="d.wacz").to_pylist()
    assert len(rows) == 1 and "compressed inside the zip" in rows[0]["error"]

    unlisted = tmp_path / "unlisted.wacz"
    with zipfile.ZipFile(unlisted, "w") as zf:
        zf.writestr("archive/x.warc.gz", warc)
        zf.writestr("datapackage.json", json.dumps({"resources": []}))
    assert "not listed" in index_file(unlisted, name="u.wacz").to_pylist()[0]["error"]


def test_a_wacz_under_warc_date_is_an_input(tmp_path: Path) -> None:
    day = tmp_path / "warc" / "2026-11-02"
    day.mkdir(parents=True)
    make_wacz(day / "crawl.wacz", {"archive/data.warc.gz": warc_bytes({"http://a.test/": b"a"})})
    (day / "notes.wacz").write_text("not a zip")
    assert [p.name for p in warc_files(tmp_path, "2026-11-02")] == ["crawl.wacz"]
    table = index_paths([(p, p.name) for p in warc_files(tmp_path, "2026-11-02")], workers=1)
    assert table.column("target_uri").to_pylist() == ["http://a.test/"]
    ignored = {r["path"]: r for r in ignored_inputs(tmp_path).to_pylist()}
    assert any(k.endswith("notes.wacz") for k in ignored)
    assert not any(k.endswith("crawl.wacz") for k in ignored)
