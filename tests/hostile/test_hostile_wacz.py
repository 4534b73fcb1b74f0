"""Hostile WACZs: a ``datapackage.json`` zip bomb, a bombed member, nesting that exhausts the
parser, wrong types in the package. Each is one ``invalid_wacz`` capture row with its reason,
decided from the zip's directory before anything large is inflated (peak RSS measured)."""

from __future__ import annotations

import hashlib
import json
import resource
import zipfile
import zlib
from io import BytesIO
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from citeaudit.archive.index import index_file
from citeaudit.archive.index import wacz as wacz_mod


def _warc() -> bytes:
    buf = BytesIO()
    w = WARCWriter(buf, gzip=True, warc_version="WARC/1.1")
    http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
    w.write_record(w.create_warc_record("https://a.org/", "response", payload=BytesIO(b"<p>hi"),
                                        http_headers=http,
                                        warc_headers_dict={"WARC-Date": "2026-11-02T10:00:00Z"}))
    return buf.getvalue()


def _package(members: dict[str, bytes]) -> dict:
    return {"profile": "data-package", "resources": [
        {"path": n, "hash": "sha256:" + hashlib.sha256(d).hexdigest(), "bytes": len(d)}
        for n, d in members.items()]}


def _write(path: Path, members: dict[str, bytes], package: bytes,
           deflated: tuple[str, ...] = ()) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            method = zipfile.ZIP_DEFLATED if name in deflated else zipfile.ZIP_STORED
            zf.writestr(zipfile.ZipInfo(name), data, compress_type=method)
        zf.writestr("datapackage.json", package, compress_type=zipfile.ZIP_DEFLATED)
    return path


def _error(path: Path) -> str:
    table = index_file(str(path), name=path.name)
    assert table.num_rows == 1
    return table.column("error")[0].as_py()


BOMB = 16 * 1024 * 1024  # 16 MB of blanks: about 16 KB deflated (1000:1)


@pytest.fixture(scope="module")
def blanks() -> bytes:
    return b" " * BOMB


def test_datapackage_zip_bomb_is_refused_before_inflating(tmp_path: Path, blanks) -> None:
    members = {"archive/data.warc.gz": _warc()}
    package = json.dumps(_package(members)).encode() + blanks  # valid JSON, then 16 MB
    path = _write(tmp_path / "bomb.wacz", members, package)
    del package
    assert path.stat().st_size < 500_000
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    error = _error(path)
    assert error.startswith("invalid_wacz: datapackage.json:") and "100:1" in error
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000  # KiB


def test_bombed_member_is_refused_before_hashing(tmp_path: Path, blanks) -> None:
    members = {"archive/data.warc.gz": _warc(), "pages/pages.jsonl": blanks}
    path = _write(tmp_path / "bomb.wacz", members, json.dumps(_package(members)).encode(),
                  deflated=("pages/pages.jsonl",))
    error = _error(path)
    assert error.startswith("invalid_wacz: pages/pages.jsonl:") and "zip bomb" in error


def test_datapackage_over_the_size_cap_is_refused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(wacz_mod, "MAX_DATAPACKAGE_BYTES", 1000)
    members = {"archive/data.warc.gz": _warc()}
    package = json.dumps({**_package(members), "pad": "x" * 5000}).encode()
    error = _error(_write(tmp_path / "big.wacz", members, package))
    assert "at most 1,000 are read" in error


@pytest.mark.parametrize("package, reason", [
    (b'{"resources": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "RecursionError"),
    (json.dumps({"resources": [{"path": "archive/data.warc.gz", "hashing": 5,
                                "stats": {"hash": "ab"}}]}).encode(), "no hash declared"),
    (json.dumps({"resources": [{"path": "archive/data.warc.gz", "stats": [1]}]}).encode(),
     "stats is not an object"),
    (b'{"resources": NaN}', "resources is not a list"),
    (zlib.compress(b"x"), "datapackage.json unreadable"),
])
def test_malformed_datapackage_is_one_invalid_row(tmp_path: Path, package: bytes,
                                                  reason: str) -> None:
    error = _error(_write(tmp_path / "bad.wacz", {"archive/data.warc.gz": _warc()}, package))
    assert error.startswith("invalid_wacz:") and reason in error
