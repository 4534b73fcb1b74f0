"""What every asset shares: the partition writer and its metadata, the per-value counts, the
group each module's assets get, and DuckDB's spill settings."""

from __future__ import annotations

import hashlib
import os
import signal
import time
from pathlib import Path

import dagster as dg
import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from assets._metadata import (
    count_by,
    counts_text,
    file_metadata,
    table_metadata,
    write_batches,
    write_table,
)
from citeaudit import duck, parquet_io
from pipelines.definitions import build_defs
from pipelines.jobs import DAILY_GROUPS, JUDGED_GROUPS
from pipelines.resources import PathsResource

ASSETS = Path(__file__).resolve().parents[2] / "assets"
PART = {"observation_date": "2026-11-01", "codebook": "v1"}

# The group of every asset, as the UI showed them when each asset named its group by hand.
GROUPS = {
    "ingest": {"answers", "claims", "citations", "rejected_inputs", "ignored_inputs"},
    "archive": {"fetched_captures", "fetch_log", "captures"},
    "citations": {"claim_checks", "answer_checks"},
    "alignment": {"citation_captures", "citation_existence", "payload_texts", "passage_checks"},
    "support": {"support_judgments", "rejected_annotations", "support_labels", "review_queue",
                "annotation_agreement", "support_evidence", "grader_judgments",
                "review_sample"},
    "scholarly": {"scholarly_records", "metadata_checks", "claim_independence"},
    "source_risk": {"source_risk_records", "rejected_records", "omission_endpoints",
                    "source_risk_claim_ledger"},
    "source_risk_conformance": {"source_risk_conformance"},
    "metrics": {"metrics"},
    "comparisons": {"comparison_units", "comparisons", "alerts", "cited_domains"},
    "report": {"report"},
    "catalog": {"catalog"},
}


def _table(n: int) -> pa.Table:
    return pa.table({"id": [f"c{i}" for i in range(n)],
                     "state": [("pass", "dead", None)[i % 3] for i in range(n)]})


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_write_table_writes_the_partition_and_describes_it(tmp_path: Path) -> None:
    table = _table(7)
    meta = write_table(table, tmp_path / "a", "citation_existence", PART, state_pass=3, n=None)
    path = parquet_io.partition_dir(tmp_path / "a", "citation_existence", PART) / "data.parquet"
    # the same bytes parquet_io writes on its own
    same = parquet_io.write_partition(table, tmp_path / "b", "citation_existence", PART)
    assert path.read_bytes() == same.read_bytes()
    assert list(meta) == ["dagster/row_count", "path", "sha256", "preview", "state_pass", "n"]
    assert meta["dagster/row_count"].value == 7
    assert meta["path"].value == str(path)
    assert meta["sha256"].value == _sha256(path)
    assert meta["preview"].value.count("\n") == 2 + 5 - 1  # header, rule, five rows
    assert meta["state_pass"] == dg.MetadataValue.text("3")
    assert meta["n"] == dg.MetadataValue.text("None")
    assert meta == table_metadata(table, path, state_pass=3, n=None)


def test_unpartitioned_assets_write_into_their_folder(tmp_path: Path) -> None:
    meta = write_table(_table(2), tmp_path, "ignored_inputs")
    assert meta["path"].value == str(tmp_path / "ignored_inputs" / "data.parquet")


def test_write_batches_reads_rows_and_preview_back_from_the_file(tmp_path: Path) -> None:
    table = _table(40)
    meta = write_batches(iter(table.to_batches(max_chunksize=3)), table.schema, tmp_path,
                         "captures", {"crawl_date": "2026-11-01"}, row_group_rows=8, files=2)
    path = Path(meta["path"].value)
    assert pq.read_table(path).equals(table)
    assert pq.ParquetFile(path).metadata.num_row_groups == 5
    assert meta["dagster/row_count"].value == 40
    assert meta["sha256"].value == _sha256(path)
    assert meta["files"].value == "2"
    # the preview is the first rows of the table, as write_table would show them
    assert meta["preview"] == table_metadata(table, path)["preview"]
    assert file_metadata(path) == {k: v for k, v in meta.items() if k != "files"}


def test_an_empty_partition_keeps_its_columns_in_the_preview(tmp_path: Path) -> None:
    empty = _table(0)
    meta = write_batches(iter([]), empty.schema, tmp_path, "support_evidence", PART)
    assert meta["dagster/row_count"].value == 0
    assert meta["preview"].value == "| id | state |\n|---|---|"


def test_count_by_counts_rows_per_value_in_value_order(tmp_path: Path) -> None:
    table = _table(7)
    assert count_by(table, "state") == {"None": 2, "dead": 2, "pass": 3}
    assert list(count_by(table, "state")) == ["None", "dead", "pass"]
    assert count_by(table.slice(0, 0), "state") == {}
    # a written file: only the column is read
    path = parquet_io.write_partition(table, tmp_path, "passage_checks", PART)
    assert count_by(path, "state") == count_by(table, "state")
    assert counts_text(count_by(table, "state")) == "None: 2, dead: 2, pass: 3"
    assert counts_text({}) == "{}"


def test_every_module_names_the_group_of_its_assets() -> None:
    """Groups come from the module names, once, in the code location: the same groups as
    when each asset named its own, and the jobs still select their stages by them."""
    defs = build_defs(PathsResource())
    graph = defs.resolve_asset_graph()
    groups: dict[str, set[str]] = {}
    for key in graph.get_all_asset_keys():
        groups.setdefault(graph.get(key).group_name, set()).add(key.to_user_string())
    assert groups == GROUPS
    assert set(DAILY_GROUPS) | set(JUDGED_GROUPS) <= set(GROUPS)
    for path in sorted(ASSETS.glob("*.py")):
        assert "group_name=" not in path.read_text(encoding="utf-8"), path


def test_spill_to_disk_sets_the_limit_and_the_folder(tmp_path: Path) -> None:
    shared = duck.connect()
    with pytest.raises(ValueError, match="isolated=True"):
        duck.spill_to_disk(shared, "300MB", tmp_path / "spill")
    shared.close()
    con = duck.connect(isolated=True)
    try:
        duck.spill_to_disk(con, "300MB", tmp_path / "spill")
        limit, folder, order = con.sql(
            "SELECT current_setting('memory_limit'), current_setting('temp_directory'), "
            "current_setting('preserve_insertion_order')").fetchall()[0]
    finally:
        con.close()
    assert limit in ("286.1 MiB", "300.0 MB")  # DuckDB reports it in its own unit
    assert folder == str(tmp_path / "spill")
    assert order is True


def _catalog_used_then_dropped(other: duckdb.DuckDBPyConnection) -> str:
    """The name of a connection's private catalog, after using it beside ``other`` and
    dropping it (in a frame of its own: a test frame's locals may outlive a ``del``)."""
    a = duck.connect()
    a.execute("CREATE TABLE t AS SELECT 1 AS x")
    a.register("mine", pa.table({"y": [1]}))
    other.execute("CREATE TABLE t AS SELECT 2 AS x")
    assert a.sql("SELECT x FROM t").fetchall() == [(1,)]
    assert other.sql("SELECT x FROM t").fetchall() == [(2,)]
    with pytest.raises(duckdb.CatalogException):
        other.sql("SELECT * FROM mine").fetchall()
    assert a.sql("SELECT current_setting('TimeZone')").fetchall() == [("UTC",)]
    name = a.sql("SELECT current_database()").fetchall()[0][0]
    a.close()
    return name


def test_in_memory_connections_have_private_catalogs_detached_when_gone() -> None:
    b = duck.connect()
    name = _catalog_used_then_dropped(b)
    c = duck.connect()  # detaches the catalogs of the connections gone first
    attached = {r[0] for r in c.sql("SELECT database_name FROM duckdb_databases()").fetchall()}
    assert name not in attached
    assert b.sql("SELECT current_database()").fetchall()[0][0] in attached


def test_a_forked_child_opens_its_own_duckdb_instance() -> None:
    parent = duck.connect()
    parent.execute("CREATE TABLE t AS SELECT 1 AS x")
    pid = os.fork()
    if pid == 0:  # DuckDB's worker threads are not in the child: the parent's instance is not used
        try:
            ok = duck.connect().sql("SELECT sum(range) FROM range(100000)").fetchall() == [
                (4999950000,)]
        except BaseException:  # noqa: BLE001 - reported through the exit status
            ok = False
        os._exit(0 if ok else 1)
    deadline = time.monotonic() + 60
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    if done[0] == 0:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung on DuckDB")
    assert os.waitstatus_to_exitcode(done[1]) == 0
    assert parent.sql("SELECT x FROM t").fetchall() == [(1,)]
