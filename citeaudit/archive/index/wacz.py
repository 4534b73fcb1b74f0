"""WACZ input: a ``.wacz`` under ``raw/warc/<date>/`` is indexed like the WARCs it holds.

A WACZ (the format Browsertrix and ReplayWeb.page exchange) is a zip with ``datapackage.json``
(every resource's path and hash) and its WARCs under ``archive/``. Before anything is read,
every resource listed is checked against its hash and size (WACZ 1.1 ``"hash":
"sha256:<hex>"`` with ``bytes``; WACZ 1.0 ``stats.hash`` with ``hashing``); a missing or bad
``datapackage.json``, a missing resource, a mismatch or a zip that does not open rejects the
whole file as one capture row with ``error = invalid_wacz: <reason>``, so none of its records
can support a citation.

The ``archive/*.warc[.gz]`` members are stored uncompressed in the zip (the WACZ spec asks for
it), so each member is a byte range of the ``.wacz`` file: its rows are the member's index rows
with offsets moved by the member's start, and ``file`` is the ``.wacz`` itself. Every reader
downstream (seek to the offset, read one record) then works on the ``.wacz`` unchanged. A
member deflated inside the zip has no such offsets: it becomes one ``invalid_wacz`` row too.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from citeaudit.archive.index.schema import CAPTURE_SCHEMA, single_row_table

ARCHIVE_MEMBER_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz")
CHUNK = 1024 * 1024
# Checked on the zip's directory before anything is inflated (docs/limits.md): a
# ``datapackage.json`` is a few kilobytes (16 MB is generous), and no member a WACZ holds
# compresses 100:1 (WARCs are stored, pages and indexes are text or already gzipped), while a
# zip bomb does (1 MB to 2 GB is 2000:1).
MAX_DATAPACKAGE_BYTES = 16 * 1024 * 1024
MAX_MEMBER_RATIO = 100


class InvalidWacz(ValueError):
    """A WACZ that is not read: the message is the reason."""


def _expected(resource: dict) -> tuple[str, str, int | None]:
    """(algorithm, hex digest, size or None) a datapackage resource declares."""
    if isinstance(resource.get("hash"), str):  # WACZ 1.1: "sha256:<hex>", "bytes"
        algo, sep, digest = resource["hash"].partition(":")
        if not sep:
            raise InvalidWacz(f"{resource.get('path')}: hash {resource['hash']!r} names no "
                              "algorithm")
        size = resource.get("bytes")
    else:  # WACZ 1.0: "hashing": "sha256", "stats": {"hash", "bytes"}
        stats = resource.get("stats") or {}
        if not isinstance(stats, dict):
            raise InvalidWacz(f"{resource.get('path')}: stats is not an object")
        algo, digest, size = resource.get("hashing", "sha256"), stats.get("hash"), \
            stats.get("bytes")
        if not isinstance(digest, str) or not isinstance(algo, str):
            raise InvalidWacz(f"{resource.get('path')}: no hash declared")
    algo = algo.strip().lower()
    if algo not in hashlib.algorithms_guaranteed:
        raise InvalidWacz(f"{resource.get('path')}: unsupported hash algorithm {algo!r}")
    return algo, digest.strip().lower(), size if isinstance(size, int) else None


def verify(path: Path | str) -> list[zipfile.ZipInfo]:
    """Check a WACZ's ``datapackage.json`` hashes; its ``archive/`` WARC members, in order.

    Raises :class:`InvalidWacz` with the reason when the file must not be read."""
    try:
        zf = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise InvalidWacz(f"not a readable zip: {exc}") from exc
    with zf:
        names = set(zf.namelist())
        if "datapackage.json" not in names:
            raise InvalidWacz("no datapackage.json")
        for info in zf.infolist():
            _check_ratio(info)
        if zf.getinfo("datapackage.json").file_size > MAX_DATAPACKAGE_BYTES:
            raise InvalidWacz(f"datapackage.json: {zf.getinfo('datapackage.json').file_size:,} "
                              f"bytes inflated; at most {MAX_DATAPACKAGE_BYTES:,} are read")
        try:
            with zf.open("datapackage.json") as fh:  # reads no more than the size declared
                package = json.loads(fh.read(MAX_DATAPACKAGE_BYTES + 1))
            resources = package["resources"]
            if not isinstance(resources, list):
                raise TypeError("resources is not a list")
        except (ValueError, KeyError, TypeError, RecursionError, OSError, EOFError,
                zipfile.BadZipFile) as exc:
            raise InvalidWacz(f"datapackage.json unreadable: {type(exc).__name__}: {exc}"[:300]
                              ) from None
        listed = set()
        for res in resources:
            if not isinstance(res, dict) or not isinstance(res.get("path"), str):
                raise InvalidWacz(f"datapackage.json: a resource without a path: {res!r}"[:200])
            member = res["path"]
            listed.add(member)
            algo, digest, size = _expected(res)
            if member not in names:
                raise InvalidWacz(f"{member}: listed in datapackage.json, not in the zip")
            h, n = hashlib.new(algo), 0
            try:
                with zf.open(member) as fh:
                    while chunk := fh.read(CHUNK):
                        h.update(chunk)
                        n += len(chunk)
            except (OSError, zipfile.BadZipFile, EOFError) as exc:  # also a bad CRC
                raise InvalidWacz(f"{member}: unreadable: {exc}") from exc
            if h.hexdigest() != digest:
                raise InvalidWacz(f"{member}: {algo} {h.hexdigest()} does not match "
                                  f"datapackage.json ({digest})")
            if size is not None and size != n:
                raise InvalidWacz(f"{member}: {n} bytes, datapackage.json says {size}")
        warcs = [i for i in zf.infolist() if i.filename.startswith("archive/")
                 and i.filename.lower().endswith(ARCHIVE_MEMBER_SUFFIXES)]
        unlisted = [i.filename for i in warcs if i.filename not in listed]
        if unlisted:
            raise InvalidWacz(f"{unlisted[0]}: not listed (no hash) in datapackage.json")
        if not warcs:
            raise InvalidWacz("no archive/*.warc[.gz] member")
        return warcs


def _check_ratio(info: zipfile.ZipInfo) -> None:
    """Refuse a member that inflates more than :data:`MAX_MEMBER_RATIO` times its compressed
    size, by the zip's directory, before a byte of it is inflated."""
    if info.compress_type == zipfile.ZIP_STORED or info.file_size <= CHUNK:
        return
    if info.file_size > MAX_MEMBER_RATIO * max(info.compress_size, 1):
        raise InvalidWacz(f"{info.filename}: {info.compress_size:,} bytes inflating to "
                          f"{info.file_size:,} (more than {MAX_MEMBER_RATIO}:1, a zip bomb)")


def member_start(path: Path | str, info: zipfile.ZipInfo) -> int:
    """Where a member's data starts in the zip file (after its local file header)."""
    with open(path, "rb") as fh:
        fh.seek(info.header_offset)
        head = fh.read(30)
    if len(head) < 30 or head[:4] != b"PK\x03\x04":
        raise InvalidWacz(f"{info.filename}: no local file header at {info.header_offset}")
    name_len, extra_len = struct.unpack("<HH", head[26:30])
    return info.header_offset + 30 + name_len + extra_len


def index_wacz(path: str, name: str, index_file: Callable[..., pa.Table], reader: str = "auto",
               all_records: bool = False) -> pa.Table:
    """The capture rows of a WACZ (see the module docstring): offsets valid in the .wacz.
    ``index_file`` is the WARC indexer (:func:`citeaudit.archive.index.index_file`), passed
    in by it so the two modules do not import each other."""
    try:
        members = verify(path)
        for info in members:
            if info.compress_type != zipfile.ZIP_STORED:
                raise InvalidWacz(f"{info.filename}: compressed inside the zip (method "
                                  f"{info.compress_type}); WACZ stores archive/ members "
                                  "uncompressed, so their offsets address the .wacz")
        starts = [member_start(path, info) for info in members]
    except InvalidWacz as exc:
        return single_row_table(name, 0, f"invalid_wacz: {exc}")
    tables = []
    for info, start in zip(members, starts, strict=True):
        # the member's bytes, copied as they are (stored), indexed with every check a WARC gets
        fd, tmp = tempfile.mkstemp(prefix=f".wacz-{os.getpid()}-", suffix=".warc")
        try:
            with os.fdopen(fd, "wb") as out, open(path, "rb") as src:
                src.seek(start)
                _copy(src, out, info.file_size)
            table = index_file(tmp, name=name, reader=reader, all_records=all_records)
        except InvalidWacz as exc:
            return single_row_table(name, 0, f"invalid_wacz: {exc}")
        finally:
            os.unlink(tmp)
        table = table.replace_schema_metadata(None)
        i = table.schema.get_field_index("offset")
        table = table.set_column(i, CAPTURE_SCHEMA.field("offset"),
                                 pc.add(table.column("offset"), pa.scalar(start, pa.int64())))
        tables.append(table)
    return pa.concat_tables(tables) if tables else CAPTURE_SCHEMA.empty_table()


def _copy(src, out, n: int) -> None:
    while n > 0:
        chunk = src.read(min(CHUNK, n))
        if not chunk:
            raise InvalidWacz("member shorter than its zip entry says")
        out.write(chunk)
        n -= len(chunk)

