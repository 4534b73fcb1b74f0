"""The storage tests' S3: one moto_server per test module on loopback (tests/storage/moto_s3.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.storage.moto_s3 import MotoS3


@pytest.fixture(scope="module")
def moto_s3() -> Iterator[MotoS3]:
    """A moto_server for this module, stopped by PID when the module's tests are done."""
    with MotoS3.start() as server:
        yield server


@pytest.fixture
def s3_env(moto_s3: MotoS3, monkeypatch: pytest.MonkeyPatch) -> MotoS3:
    """``moto_s3`` with this test's process environment pointed at it."""
    moto_s3.apply(monkeypatch)
    return moto_s3
