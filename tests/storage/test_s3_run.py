"""A demo corpus's daily and judged jobs with raw and derived on S3 (moto on loopback): every
output file is byte-identical to the shared local-disk run of the same corpus (the session's
small shared run, conftest: one date, both codebooks; the S3 run runs codebook v1, whose files
a run of both codebooks writes the same)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from citeaudit import duck
from tests.storage.moto_s3 import MotoS3

PROJECT = Path(__file__).resolve().parents[2]
FETCH_TIME_COLUMNS = {"scholarly_records": "fetched_at"}
CODEBOOK = "v1"


@pytest.fixture(scope="module")
def s3_run(small_run, moto_s3: MotoS3, tmp_path_factory: pytest.TempPathFactory):
    """The shared small corpus uploaded to a bucket and run there by ``citeaudit run``."""
    from citeaudit import cli

    bucket = moto_s3.create_bucket("citeaudit-e2e")
    raw, derived = moto_s3.root(bucket, "raw"), moto_s3.root(bucket, "derived")
    moto_s3.upload_tree(small_run.raw, raw)
    home = tmp_path_factory.mktemp("s3_home")
    shutil.copyfile(PROJECT / "tests" / "dagster.yaml", home / "dagster.yaml")
    state = tmp_path_factory.mktemp("s3_state")
    with pytest.MonkeyPatch.context() as mp:
        moto_s3.apply(mp)
        mp.setenv("DAGSTER_HOME", str(home))
        mp.setenv("CITEAUDIT_STATE_DIR", str(state))
        for var in ("CITEAUDIT_CROSSREF_URL", "CITEAUDIT_OPENALEX_URL", "CITEAUDIT_RAW",
                    "CITEAUDIT_DERIVED"):
            mp.delenv(var, raising=False)
        code = cli.main(["run", "--raw", raw, "--derived", derived, "--codebook", CODEBOOK,
                         "--quiet"])
    return code, moto_s3.keys(derived), state, home, raw, derived


def _local_outputs(derived: Path) -> dict[str, bytes]:
    """The local run's output files of the daily audit and of codebook v1."""
    out = {}
    for path in sorted(derived.rglob("*")):
        rel = path.relative_to(derived)
        if (path.is_file() and not any(part.startswith(".") for part in rel.parts)
                and not any(p.startswith("codebook=") and p != f"codebook={CODEBOOK}"
                            for p in rel.parts)):
            out[rel.as_posix()] = path.read_bytes()
    return out


def test_s3_run_succeeds(s3_run) -> None:
    code = s3_run[0]
    assert code == 0


def test_every_parquet_output_byte_identical_to_local(s3_run, small_run) -> None:
    """Byte for byte, except the registry cache's fetch time (two runs look DOIs up at different
    moments; tests/pipelines/test_ops_crash.py compares local runs the same way): those files
    must be equal row for row without that column."""
    objects = s3_run[1]
    local = {k: v for k, v in _local_outputs(small_run.derived).items() if k.endswith(".parquet")}
    remote = {k: v for k, v in objects.items() if k.endswith(".parquet")}
    assert len(local) > 30  # the daily and v1 assets of one date
    assert sorted(remote) == sorted(local)
    differ = sorted(k for k in local if remote[k] != local[k])
    for rel in differ:
        column = FETCH_TIME_COLUMNS.get(rel.split("/")[0])
        assert column, f"{rel}: other bytes than the local run's"
        mine, theirs = pq.read_table(io.BytesIO(remote[rel])), pq.read_table(io.BytesIO(local[rel]))
        assert mine.drop_columns([column]).equals(theirs.drop_columns([column])), rel
    assert len(differ) < len(local) // 4
    # A run of codebook v1 alone writes v1's bytes of a run of both: v2 touches nothing of v1,
    # here where the two codebooks do label differently (v2 remaps a partial label).
    labels = {v: small_run.derived.glob(f"support_labels/*/codebook={v}/data.parquet")
              for v in ("v1", "v2")}
    verdicts = {v: sorted(pq.read_table(f).column("verdict").to_pylist()
                          for f in files) for v, files in labels.items()}
    assert verdicts["v1"] != verdicts["v2"]
    assert not [k for k in remote if "codebook=v2" in k]


def test_reports_and_catalog_on_s3(s3_run, small_run) -> None:
    objects, state = s3_run[1], s3_run[2]
    local = _local_outputs(small_run.derived)
    pages = sorted(k for k in local if k.endswith("index.html"))
    assert pages and all(objects.get(k) == local[k] for k in pages)
    assert "catalog.duckdb" in objects
    assert not any(Path(k).name.startswith(".") for k in objects), "temporary objects left"
    assert (state / "s3" / "citeaudit-e2e" / "derived" / ".citeaudit.lock").is_file()


def test_status_reads_the_s3_run(s3_run, moto_s3: MotoS3, monkeypatch, capsys) -> None:
    from citeaudit import cli

    _code, _objects, state, home, raw, derived = s3_run
    moto_s3.apply(monkeypatch)
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setenv("CITEAUDIT_STATE_DIR", str(state))
    capsys.readouterr()
    assert cli.main(["status", "--raw", raw, "--derived", derived, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["partitions"]
    assert len(rows) > 40
    ran = [r for r in rows if not r["partition"].startswith("v2|")]
    assert ran and {r["state"] for r in ran} == {"materialized"}
    # the raw folder's other codebook was not run on S3: its partitions are missing
    assert {r["state"] for r in rows if r["partition"].startswith("v2|")} == {"missing"}


def test_analyst_opens_the_s3_catalog_elsewhere(s3_run, small_run, moto_s3: MotoS3, monkeypatch,
                                                tmp_path: Path) -> None:
    """From another machine's point of view (an empty state folder): the uploaded catalog is
    downloaded, its views read the s3 parquet and count what the local catalog counts."""
    from citeaudit import catalog, storage

    moto_s3.apply(monkeypatch)
    monkeypatch.setenv("CITEAUDIT_STATE_DIR", str(tmp_path / "elsewhere"))
    con = catalog.connect(storage.as_root(s3_run[5]))
    local = duck.connect(small_run.derived / "catalog.duckdb", read_only=True)
    query = "SELECT count(*), count(DISTINCT answer_id) FROM claims"
    assert con.sql(query).fetchall() == local.sql(query).fetchall()
    query = ("SELECT verdict, count(*) FROM citation_existence WHERE codebook = 'v1' "
             "GROUP BY ALL ORDER BY ALL")
    assert con.sql(query).fetchall() == local.sql(query).fetchall()
    assert "s3://citeaudit-e2e/derived/" in con.sql(
        "SELECT sql FROM duckdb_views() WHERE view_name = 'claims'").fetchall()[0][0]
