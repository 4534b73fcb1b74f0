"""The demo corpus's daily and judged jobs with raw and derived on S3 (moto on loopback): every
output file is byte-identical to the shared local-disk run of the same corpus."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.storage.moto_s3 import MotoS3

PROJECT = Path(__file__).resolve().parents[2]
FETCH_TIME_COLUMNS = {"scholarly_records": "fetched_at"}


@pytest.fixture(scope="module")
def s3_run(demo_run, moto_s3: MotoS3, tmp_path_factory: pytest.TempPathFactory):
    """The shared demo corpus uploaded to a bucket and run there by ``citeaudit run``."""
    from citeaudit import cli

    bucket = moto_s3.create_bucket("citeaudit-e2e")
    raw, derived = moto_s3.root(bucket, "raw"), moto_s3.root(bucket, "derived")
    moto_s3.upload_tree(demo_run.raw, raw)
    home = tmp_path_factory.mktemp("s3_home")
    shutil.copyfile(PROJECT / "dagster.yaml", home / "dagster.yaml")
    state = tmp_path_factory.mktemp("s3_state")
    with pytest.MonkeyPatch.context() as mp:
        moto_s3.apply(mp)
        mp.setenv("DAGSTER_HOME", str(home))
        mp.setenv("CITEAUDIT_STATE_DIR", str(state))
        for var in ("CITEAUDIT_CROSSREF_URL", "CITEAUDIT_OPENALEX_URL", "CITEAUDIT_RAW",
                    "CITEAUDIT_DERIVED"):
            mp.delenv(var, raising=False)
        code = cli.main(["run", "--raw", raw, "--derived", derived, "--quiet"])
    return code, moto_s3.keys(derived), state


def _local_outputs(derived: Path) -> dict[str, bytes]:
    out = {}
    for path in sorted(derived.rglob("*")):
        rel = path.relative_to(derived)
        if path.is_file() and not any(part.startswith(".") for part in rel.parts):
            out[rel.as_posix()] = path.read_bytes()
    return out


def test_s3_run_succeeds(s3_run) -> None:
    code, _objects, _state = s3_run
    assert code == 0


def test_every_parquet_output_byte_identical_to_local(s3_run, demo_run) -> None:
    """Byte for byte, except the registry cache's fetch time (two runs look DOIs up at different
    moments; tests/pipelines/test_ops_crash.py compares local runs the same way): those files
    must be equal row for row without that column."""
    _code, objects, _state = s3_run
    local = {k: v for k, v in _local_outputs(demo_run.derived).items() if k.endswith(".parquet")}
    remote = {k: v for k, v in objects.items() if k.endswith(".parquet")}
    assert len(local) > 40
    assert sorted(remote) == sorted(local)
    differ = sorted(k for k in local if remote[k] != local[k])
    for rel in differ:
        column = FETCH_TIME_COLUMNS.get(rel.split("/")[0])
        assert column, f"{rel}: other bytes than the local run's"
        mine, theirs = pq.read_table(io.BytesIO(remote[rel])), pq.read_table(io.BytesIO(local[rel]))
        assert mine.drop_columns([column]).equals(theirs.drop_columns([column])), rel
    assert len(differ) < len(local) // 4


def test_reports_and_catalog_on_s3(s3_run, demo_run) -> None:
    _code, objects, state = s3_run
    local = _local_outputs(demo_run.derived)
    pages = sorted(k for k in local if k.endswith("index.html"))
    assert pages and all(objects.get(k) == local[k] for k in pages)
    assert "catalog.duckdb" in objects
    assert not any(Path(k).name.startswith(".") for k in objects), "temporary objects left"
    assert (state / "s3" / "citeaudit-e2e" / "derived" / ".citeaudit.lock").is_file()
