"""citeaudit.storage and parquet_io on a real S3 endpoint (moto_server on loopback)."""

from __future__ import annotations

import threading
from pathlib import Path

import pyarrow as pa
import pytest

from citeaudit import duck, parquet_io, storage
from tests.storage.moto_s3 import MotoS3


def _table(n: int, tag: str) -> pa.Table:
    return pa.table({"id": list(range(n)), "tag": [tag] * n})


def test_roots_parse(tmp_path: Path) -> None:
    assert storage.as_root(tmp_path / "x") == (tmp_path / "x").resolve()
    assert isinstance(storage.as_root("rel/dir"), Path)
    assert storage.uri(storage.as_root("s3://bucket-a/some/prefix/")) == "s3://bucket-a/some/prefix"
    with pytest.raises(storage.StorageError, match="needs a bucket"):
        storage.as_root("s3:///prefix")
    with pytest.raises(storage.StorageError, match="gs:// roots are not supported"):
        storage.as_root("gs://bucket/prefix")


def test_partition_round_trip_same_bytes_as_local(s3_env: MotoS3, tmp_path: Path) -> None:
    bucket = s3_env.create_bucket("roundtrip")
    remote = storage.as_root(s3_env.root(bucket, "derived"))
    table = _table(1000, "a")
    part = {"observation_date": "2026-11-02"}
    written = parquet_io.write_partition(table, remote, "answers", part)
    local = parquet_io.write_partition(table, tmp_path, "answers", part)
    assert storage.uri(written) == (
        "s3://roundtrip/derived/answers/observation_date=2026-11-02/data.parquet")
    objects = s3_env.keys(s3_env.root(bucket, "derived"))
    assert objects == {"answers/observation_date=2026-11-02/data.parquet": local.read_bytes()}
    assert parquet_io.read_partition(remote, "answers", part).equals(table)
    assert parquet_io.read_optional(remote, "answers", {"observation_date": "2026-11-03"}) is None
    with pytest.raises(FileNotFoundError, match="s3://roundtrip/derived/answers/observation_"):
        parquet_io.read_partition(remote, "answers", {"observation_date": "2026-11-03"})


def test_duckdb_reads_s3_globs_without_httpfs(s3_env: MotoS3) -> None:
    bucket = s3_env.create_bucket("globs")
    remote = storage.as_root(s3_env.root(bucket, "derived"))
    storage.use_remote(remote)
    for day in ("2026-11-02", "2026-11-03"):
        parquet_io.write_partition(_table(3, day), remote, "claims", {"observation_date": day})
    con = duck.connect()
    loaded = con.sql("SELECT extension_name FROM duckdb_extensions() WHERE loaded").fetchall()
    assert ("httpfs",) not in loaded
    rows = con.read_parquet(parquet_io.dataset_glob(remote, "claims", 1),
                            hive_partitioning=True).aggregate(
        "observation_date, count(*)", "observation_date").order("1").fetchall()
    assert [(str(d), n) for d, n in rows] == [("2026-11-02", 3), ("2026-11-03", 3)]


def test_a_changed_endpoint_replaces_the_shared_instances_filesystem(
        s3_env: MotoS3, monkeypatch: pytest.MonkeyPatch) -> None:
    """Filesystems belong to the DuckDB instance the in-memory connections share: a connection
    opened after the object-storage configuration changed reads through the new endpoint, not
    through the filesystem an earlier configuration registered."""
    bucket = s3_env.create_bucket("moved")
    remote = storage.as_root(s3_env.root(bucket, "derived"))
    storage.use_remote(remote)
    parquet_io.write_partition(_table(4, "x"), remote, "claims", {"observation_date": "2026-11-02"})
    glob = parquet_io.dataset_glob(remote, "claims", 1)
    with monkeypatch.context() as gone:
        gone.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # the discard port: nothing listens
        earlier = duck.connect()
        assert earlier.list_filesystems() == ["s3"]
        del earlier
    con = duck.connect()
    assert con.read_parquet(glob).aggregate("count(*)").fetchall() == [(4,)]


def test_reader_never_sees_half_an_object(s3_env: MotoS3) -> None:
    """While a writer replaces a partition again and again with tables of different sizes, every
    read gets one whole table, old or new (a torn object would fail to parse or mix tags)."""
    bucket = s3_env.create_bucket("atomic")
    remote = storage.as_root(s3_env.root(bucket, "derived"))
    big = {tag: _table(60_000 if tag in "ac" else 5, tag) for tag in "abcd"}
    parquet_io.write_partition(big["a"], remote, "passages")
    stop, seen, errors = threading.Event(), set(), []

    def read() -> None:
        while not stop.is_set():
            try:
                got = parquet_io.read_partition(remote, "passages")
            except Exception as exc:  # noqa: BLE001 - any failure is the finding
                errors.append(repr(exc))
                return
            tags = set(got.column("tag").to_pylist())
            assert len(tags) == 1
            tag = tags.pop()
            assert got.num_rows == big[tag].num_rows
            seen.add(tag)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for _ in range(6):
            for tag in "bcda":
                parquet_io.write_partition(big[tag], remote, "passages")
    finally:
        stop.set()
        reader.join()
    assert not errors
    assert len(seen) >= 2


def test_open_binary_reads_ranges(s3_env: MotoS3) -> None:
    bucket = s3_env.create_bucket("ranges")
    data = bytes(range(256)) * 40_000  # ~10 MB: more than one read block
    s3_env.client().put_object(Bucket=bucket, Key="raw/warc/x.warc", Body=data)
    path = storage.as_root(s3_env.root(bucket, "raw")) / "warc" / "x.warc"
    assert storage.size(path) == len(data)
    with storage.open_binary(path) as fh:
        fh.seek(7_654_321)
        assert fh.read(1000) == data[7_654_321:7_655_321]
        assert fh.tell() == 7_655_321
        fh.seek(10)
        assert fh.read(5) == data[10:15]
    with pytest.raises(FileNotFoundError, match="s3://ranges/raw/warc/nope.warc"):
        storage.open_binary(path.parent / "nope.warc").read(1)


def test_missing_bucket_is_a_clear_error(s3_env: MotoS3) -> None:
    root = storage.as_root("s3://no-such-bucket-here/derived")
    with pytest.raises(storage.StorageError, match=r"derived root s3://no-such-bucket-here/"
                       r"derived: bucket 'no-such-bucket-here' does not exist at http://127"):
        storage.check_root(root, "derived", must_exist=False)
    with pytest.raises(storage.StorageError, match="s3://no-such-bucket-here/derived/answers/"):
        parquet_io.write_partition(_table(1, "x"), root, "answers")


def test_empty_prefix_is_a_clear_error(s3_env: MotoS3) -> None:
    bucket = s3_env.create_bucket("emptyprefix")
    with pytest.raises(storage.StorageError, match="raw root s3://emptyprefix/raw: nothing under"):
        storage.check_root(storage.as_root(s3_env.root(bucket, "raw")), "raw")


def test_refused_credentials_are_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """moto with authentication on refuses unknown keys: the error names the URI and the fix."""
    with MotoS3.start(extra_env={"INITIAL_NO_AUTH_ACTION_COUNT": "0"}) as server:
        server.apply(monkeypatch)
        root = storage.as_root("s3://locked-bucket/derived")
        with pytest.raises(storage.StorageError, match=r"derived root s3://locked-bucket/derived:"
                           r" access denied .* AWS_ACCESS_KEY_ID"):
            storage.check_root(root, "derived", must_exist=False)
