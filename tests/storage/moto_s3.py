"""A real S3 endpoint on loopback for tests: ``moto_server`` as a subprocess, stopped by PID.

Usage (any test folder)::

    from tests.storage.moto_s3 import MotoS3

    with MotoS3.start() as s3:             # moto_server on 127.0.0.1:<free port>
        bucket = s3.create_bucket("citeaudit-test")
        env = s3.env                       # AWS_* variables for clients and subprocesses
        raw, derived = s3.root(bucket, "raw"), s3.root(bucket, "derived")   # s3://... URIs

``env`` carries dummy credentials, the region, ``AWS_ENDPOINT_URL`` (what citeaudit.storage,
s3fs and pyarrow read) and ``AWS_EC2_METADATA_DISABLED`` (no instance-metadata lookups off the
machine). Pass it to worker processes as is; in-process, ``s3.apply(monkeypatch)`` sets it.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

MOTO_SERVER = Path(sys.executable).with_name("moto_server")
START_TIMEOUT = 30.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class MotoS3:
    """One running moto_server: its PID, endpoint and the environment that points at it."""

    process: subprocess.Popen
    endpoint: str
    env: dict[str, str] = field(default_factory=dict)

    @classmethod
    @contextmanager
    def start(cls, *, extra_env: dict[str, str] | None = None) -> Iterator[MotoS3]:
        """Start moto_server on 127.0.0.1 and a free port; stop it by PID on exit (also when
        the block fails). ``extra_env`` goes to the server (e.g. moto's auth switches)."""
        if not MOTO_SERVER.is_file():
            raise RuntimeError(f"{MOTO_SERVER} not found: pip install 'citeaudit[test]' "
                               "(moto[server])")
        port = free_port()
        endpoint = f"http://127.0.0.1:{port}"
        server_env = {**os.environ, **(extra_env or {})}
        process = subprocess.Popen(
            [str(MOTO_SERVER), "-H", "127.0.0.1", "-p", str(port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=server_env,
        )
        env = {
            "AWS_ACCESS_KEY_ID": "citeaudit-test",
            "AWS_SECRET_ACCESS_KEY": "citeaudit-test-secret",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_EC2_METADATA_DISABLED": "true",
        }
        server = cls(process, endpoint, env)
        try:
            server._wait_ready()
            yield server
        finally:
            server.stop()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"moto_server exited with {self.process.returncode}")
            try:
                with urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"moto_server did not answer on {self.endpoint} in {START_TIMEOUT} s")

    def stop(self) -> None:
        """Stop the server by its PID (SIGTERM, then SIGKILL)."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait()

    def client(self):
        """A boto3 S3 client on this server."""
        import boto3

        return boto3.client(
            "s3", endpoint_url=self.endpoint, region_name=self.env["AWS_REGION"],
            aws_access_key_id=self.env["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=self.env["AWS_SECRET_ACCESS_KEY"],
        )

    def create_bucket(self, name: str) -> str:
        """Create a bucket (3-63 characters); return its name."""
        self.client().create_bucket(Bucket=name)
        return name

    def root(self, bucket: str, prefix: str) -> str:
        """The URI of a root in ``bucket``: ``s3://bucket/prefix``."""
        return f"s3://{bucket}/{prefix.strip('/')}"

    def upload_tree(self, local: Path, uri: str) -> int:
        """Copy every file under ``local`` to ``uri`` (same relative keys); return the count."""
        bucket, _, prefix = uri.removeprefix("s3://").partition("/")
        client, count = self.client(), 0
        for path in sorted(local.rglob("*")):
            if path.is_file():
                key = f"{prefix}/{path.relative_to(local).as_posix()}".lstrip("/")
                client.upload_file(str(path), bucket, key)
                count += 1
        return count

    def keys(self, uri: str) -> dict[str, bytes]:
        """Every object under ``uri``: relative key → bytes."""
        bucket, _, prefix = uri.removeprefix("s3://").partition("/")
        client, out = self.client(), {}
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket,
                                                                    Prefix=f"{prefix}/"):
            for item in page.get("Contents", []):
                body = client.get_object(Bucket=bucket, Key=item["Key"])["Body"].read()
                out[item["Key"][len(prefix) + 1:]] = body
        return out

    def names(self, uri: str) -> list[str]:
        """The relative keys of every object under ``uri`` (a listing, no bodies), sorted."""
        bucket, _, prefix = uri.removeprefix("s3://").partition("/")
        client, out = self.client(), []
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket,
                                                                    Prefix=f"{prefix}/"):
            out += [item["Key"][len(prefix) + 1:] for item in page.get("Contents", [])]
        return sorted(out)

    def get(self, uri: str, rel: str) -> bytes:
        """The bytes of the object ``rel`` under ``uri``."""
        bucket, _, prefix = uri.removeprefix("s3://").partition("/")
        return self.client().get_object(Bucket=bucket, Key=f"{prefix}/{rel}")["Body"].read()

    def apply(self, monkeypatch) -> None:
        """Point this process at the server (pytest's monkeypatch undoes it)."""
        for name, value in self.env.items():
            monkeypatch.setenv(name, value)
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3"):
            monkeypatch.delenv(name, raising=False)
