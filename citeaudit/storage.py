"""Where a root lives: a local folder or an ``s3://bucket/prefix`` URI, behind one interface.

The raw root and the derived root are each either a local path or an object-storage URI. A
local root is a plain :class:`pathlib.Path` (resolved), so every local code path stays exactly
as it was. A remote root is a ``universal-pathlib`` :class:`upath.UPath` over ``s3fs``: the same
pathlib calls (``/``, ``glob``, ``rglob``, ``iterdir``, ``is_file``, ``open``, ``read_bytes``)
work on both, so the layout code and the assets keep their pathlib-style code.

Three clients read and write objects, each configured here from the same standard AWS
environment (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``,
``AWS_REGION`` / ``AWS_DEFAULT_REGION``, and ``AWS_ENDPOINT_URL_S3`` / ``AWS_ENDPOINT_URL`` for an
S3-compatible service such as moto or MinIO):

- parquet goes through ``pyarrow.fs.S3FileSystem`` (:func:`arrow_filesystem`): one object per
  partition file, uploaded from memory in one request, so a reader sees the old object or the
  new one, never half;
- DuckDB reads remote parquet through the ``s3fs`` filesystem registered on each connection
  (:func:`register_duckdb`), never through DuckDB's httpfs extension (not installable offline);
- WARC and other raw files are read by :func:`open_binary`: an ``s3fs`` file object that fetches
  byte ranges as the reader seeks, so a record at offset N costs one ranged GET, not the file.

Nothing here reaches the network unless a root is an ``s3://`` URI a user configured.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

REMOTE_SCHEMES = ("s3",)
# Bytes s3fs fetches per ranged read: a WARC record is usually far smaller, so one GET per record.
READ_BLOCK_SIZE = 1 << 20
DEFAULT_REGION = "us-east-1"
STATE_ENV = "CITEAUDIT_STATE_DIR"

# A root: a local path or a remote UPath. Both support the pathlib calls the project uses.
Root = Any


class StorageError(RuntimeError):
    """A root that cannot be used (no bucket, refused credentials, unreachable endpoint)."""


def is_remote(path: object) -> bool:
    """Whether ``path`` (str, Path or UPath) names object storage rather than a local file."""
    protocol = getattr(path, "protocol", None)
    if isinstance(protocol, str) and protocol:
        return protocol in REMOTE_SCHEMES or protocol.split("+")[0] in REMOTE_SCHEMES
    scheme = urlsplit(str(path)).scheme
    return scheme in REMOTE_SCHEMES


def as_root(value: str | os.PathLike[str]) -> Root:
    """A root from a command-line or configuration value: a resolved local :class:`Path`, or a
    :class:`upath.UPath` for ``s3://bucket/prefix`` (trailing slashes dropped)."""
    if is_remote(value):
        from upath import UPath

        text = str(value).rstrip("/")
        bucket = urlsplit(text).netloc
        if not bucket:
            raise StorageError(f"{value}: an s3 root needs a bucket (s3://bucket/prefix)")
        _REMOTE_IN_USE[0] = True
        return UPath(text, **s3_options())
    scheme = urlsplit(str(value)).scheme
    if len(scheme) > 1:  # a one-letter scheme is a Windows drive, not a URI
        raise StorageError(
            f"{value}: {scheme}:// roots are not supported (a local path or s3://bucket/prefix)"
        )
    return Path(value).resolve()


def path(value: str | os.PathLike[str]) -> Root:
    """``Path(value)`` for a local path, ``value`` itself when it is already a remote path: what
    a function taking either a str or a root uses instead of ``Path(...)``."""
    if is_remote(value) and not isinstance(value, str):
        return value
    if is_remote(value):
        return as_root(value)
    return Path(value)


def uri(path: object) -> str:
    """The text that names ``path`` everywhere (messages, tags, SQL): ``s3://bucket/key`` for a
    remote path, the absolute path for a local one."""
    return str(path) if is_remote(path) else str(Path(path).resolve())


def s3_endpoint() -> str | None:
    """The S3 endpoint URL from the environment (``AWS_ENDPOINT_URL_S3`` first), or None for
    AWS itself."""
    return os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or None


def s3_region() -> str:
    """The region from ``AWS_REGION`` / ``AWS_DEFAULT_REGION``, else us-east-1."""
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or DEFAULT_REGION


def s3_options() -> dict[str, Any]:
    """s3fs options from the environment (credentials themselves are read by botocore)."""
    # No listings cache: parquet is written by another client (pyarrow), and a stale listing
    # would hide a partition just written.
    options: dict[str, Any] = {"default_block_size": READ_BLOCK_SIZE, "use_listings_cache": False}
    endpoint = s3_endpoint()
    client: dict[str, Any] = {"region_name": s3_region()}
    if endpoint:
        client["endpoint_url"] = endpoint
    options["client_kwargs"] = client
    return options


def _env_key() -> tuple[str | None, ...]:
    names = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
             "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_PROFILE")
    # The PID too: neither client survives a fork (index worker processes make their own).
    return (str(os.getpid()), *(os.environ.get(n) for n in names))


def fsspec_filesystem() -> Any:
    """The ``s3fs`` filesystem for the current environment (one per distinct configuration)."""
    return _fsspec(_env_key())


@cache
def _fsspec(_key: tuple[str | None, ...]) -> Any:
    import s3fs

    return s3fs.S3FileSystem(**s3_options())


def arrow_filesystem(path: object) -> tuple[Any, str]:
    """(pyarrow filesystem, path on it) for ``path``: the local filesystem and the absolute
    path, or an S3FileSystem and ``bucket/key``. moto and other S3-compatible services need
    the endpoint, scheme and region set explicitly: they are, from the environment."""
    import pyarrow.fs as pafs

    if not is_remote(path):
        return pafs.LocalFileSystem(), str(Path(path).resolve())
    return _arrow_s3(_env_key()), _bucket_key(path)


@cache
def _arrow_s3(_key: tuple[str | None, ...]) -> Any:
    import pyarrow.fs as pafs

    options: dict[str, Any] = {"region": s3_region()}
    endpoint = s3_endpoint()
    if endpoint:
        parts = urlsplit(endpoint)
        options["endpoint_override"] = parts.netloc or parts.path
        options["scheme"] = parts.scheme or "https"
    if os.environ.get("AWS_ACCESS_KEY_ID") and os.environ.get("AWS_SECRET_ACCESS_KEY"):
        options["access_key"] = os.environ["AWS_ACCESS_KEY_ID"]
        options["secret_key"] = os.environ["AWS_SECRET_ACCESS_KEY"]
        if os.environ.get("AWS_SESSION_TOKEN"):
            options["session_token"] = os.environ["AWS_SESSION_TOKEN"]
    return pafs.S3FileSystem(**options)


def _bucket_key(path: object) -> str:
    parts = urlsplit(str(path))
    return f"{parts.netloc}{parts.path}".rstrip("/")


def register_duckdb(con: Any, *paths: object) -> None:
    """Register the s3fs filesystem on a DuckDB connection when any of ``paths`` is remote (or,
    with no paths, whenever s3 is configured by a remote root in this process), so
    ``read_parquet('s3://...')`` works without httpfs."""
    filesystem = duckdb_filesystem(*paths)
    if filesystem is not None and not _registered(con):
        con.register_filesystem(filesystem)


def duckdb_filesystem(*paths: object) -> Any | None:
    """The s3fs filesystem a DuckDB connection needs: when any of ``paths`` is remote (or, with
    no paths, when a remote root is configured in this process), the one for the current
    environment; otherwise None."""
    wanted = any(is_remote(p) for p in paths) if paths else _remote_seen()
    return fsspec_filesystem() if wanted else None


def _registered(con: Any) -> bool:
    try:
        return "s3" in " ".join(con.list_filesystems())
    except Exception:  # noqa: BLE001 - an older DuckDB without list_filesystems
        return False


def _remote_seen() -> bool:
    """Whether this process configured a remote root (CITEAUDIT_RAW / CITEAUDIT_DERIVED or an
    explicit :func:`use_remote`)."""
    return _REMOTE_IN_USE[0] or any(
        is_remote(os.environ.get(n, "")) for n in ("CITEAUDIT_RAW", "CITEAUDIT_DERIVED"))


_REMOTE_IN_USE = [False]


def use_remote(*roots: object) -> None:
    """Note that this process works on remote roots: DuckDB connections get s3fs registered."""
    if any(is_remote(r) for r in roots):
        _REMOTE_IN_USE[0] = True


def open_binary(path: object) -> IO[bytes]:
    """Open a file for reading bytes: a local file, or an s3fs object read by ranged GETs as the
    caller seeks (seek/tell/read work as on a local file)."""
    if not is_remote(path):
        return open(path, "rb")  # noqa: SIM115 - the caller closes it
    try:
        return fsspec_filesystem().open(_bucket_key(path), "rb", block_size=READ_BLOCK_SIZE)
    except FileNotFoundError:
        raise FileNotFoundError(f"{uri(path)}: no such object") from None
    except OSError as exc:
        raise StorageError(f"{uri(path)}: cannot open: {exc}") from exc


def read_bytes(path: object) -> bytes:
    """The whole content of a file; remotely one GET without a range, so the bytes are one
    version of the object even while a writer replaces it."""
    if not is_remote(path):
        return Path(path).read_bytes()
    try:
        return fsspec_filesystem().cat_file(_bucket_key(path))
    except FileNotFoundError:
        raise FileNotFoundError(f"{uri(path)}: no such object") from None
    except OSError as exc:
        raise StorageError(f"{uri(path)}: cannot read: {exc}") from exc


def arrow_source(path: object) -> Any:
    """What a pyarrow reader (csv, json, parquet) takes for ``path``: the local path itself, or
    the remote object's bytes in one buffer (one GET, one whole version)."""
    if not is_remote(path):
        return path
    import pyarrow as pa

    return pa.BufferReader(read_bytes(path))


def size(path: object) -> int:
    """The size of a file in bytes."""
    if not is_remote(path):
        return Path(path).stat().st_size
    return int(fsspec_filesystem().size(_bucket_key(path)))


def is_file(path: object) -> bool:
    """Whether a file (object) exists at ``path``."""
    if not is_remote(path):
        return Path(path).is_file()
    import pyarrow.fs as pafs

    fs, where = arrow_filesystem(path)
    try:
        return fs.get_file_info(where).type == pafs.FileType.File
    except OSError as exc:
        raise StorageError(f"{uri(path)}: cannot read: {exc}") from exc


def write_bytes_atomic(path: object, data: bytes) -> None:
    """Replace the file at ``path`` with ``data`` so a reader sees the old or the new content,
    never part: locally a temporary file (unique to this process) renamed into place, remotely
    one object upload (S3 makes an object visible only once it is complete)."""
    if is_remote(path):
        fs, where = arrow_filesystem(path)
        try:
            with fs.open_output_stream(where) as out:
                out.write(data)
        except OSError as exc:
            raise StorageError(f"{uri(path)}: cannot write: {exc}") from exc
        return
    final = Path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    _remove_dead_temps(final)
    tmp = final.with_name(f".{final.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)  # a full disk or an interrupt leaves no temporary file
        raise


def _remove_dead_temps(final: Path) -> None:
    """Remove ``.<name>.<pid>.tmp`` files beside ``final`` whose writer is gone (killed, or
    out of disk before it could clean up): every later write of the file clears them."""
    for leftover in final.parent.glob(f".{final.name}.*.tmp"):
        pid = leftover.name[len(final.name) + 2:-len(".tmp")]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            leftover.unlink(missing_ok=True)
        except (PermissionError, OverflowError):
            continue


def upload_file(local: Path, path: object, chunk: int = 8 << 20) -> None:
    """Copy the local file ``local`` to the remote ``path`` as one object, streamed in chunks
    (a multipart upload for a large file): S3 shows the object only once the upload
    completes, so a reader sees the old or the new content, never part."""
    fs, where = arrow_filesystem(path)
    try:
        with open(local, "rb") as src, fs.open_output_stream(where) as out:
            while block := src.read(chunk):
                out.write(block)
    except OSError as exc:
        raise StorageError(f"{uri(path)}: cannot write: {exc}") from exc


def check_root(root: object, role: str, *, must_exist: bool = True) -> None:
    """Fail with a clear :class:`StorageError` naming the URI when a remote root cannot be used:
    no such bucket, credentials refused, endpoint unreachable, or (``must_exist``) nothing under
    the prefix. A local root is left to the callers' own checks."""
    if not is_remote(root):
        return
    text = uri(root)
    bucket = urlsplit(text).netloc
    endpoint = s3_endpoint() or "AWS S3"
    fs = fsspec_filesystem()
    try:
        fs.ls(bucket, refresh=True)
    except FileNotFoundError:
        raise StorageError(f"{role} root {text}: bucket {bucket!r} does not exist at "
                           f"{endpoint}") from None
    except PermissionError as exc:
        raise StorageError(f"{role} root {text}: access denied to bucket {bucket!r} at "
                           f"{endpoint}: check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY "
                           f"({exc})") from None
    except OSError as exc:
        raise StorageError(f"{role} root {text}: cannot reach {endpoint}: {exc}") from None
    if must_exist and not fs.exists(_bucket_key(root)):
        raise StorageError(f"{role} root {text}: nothing under this prefix in bucket {bucket!r}")


def local_state_dir(derived: object) -> Path:
    """Where the local-only state of a derived root lives (the run lock, the default
    DAGSTER_HOME, the working copy of the catalog): the derived folder itself when it is
    local; for a remote root ``$CITEAUDIT_STATE_DIR``, else ``./.citeaudit-state``, in a
    subfolder named after the bucket and prefix. A lock there keeps two writers on this machine
    apart; across machines the run queue of a shared Dagster instance is what serializes runs."""
    if not is_remote(derived):
        return Path(derived).resolve()
    base = Path(os.environ.get(STATE_ENV) or ".citeaudit-state").resolve()
    return base / "s3" / _bucket_key(derived)


@contextmanager
def local_copy(path: object) -> Iterator[Path]:
    """A local file with the content of ``path``: the file itself when local, else a download
    into a temporary file removed afterwards (for tools that only open local files)."""
    if not is_remote(path):
        yield Path(path)
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix="citeaudit-") as folder:
        target = Path(folder) / Path(_bucket_key(path)).name
        fsspec_filesystem().get_file(_bucket_key(path), str(target))
        yield target
