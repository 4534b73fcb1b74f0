"""catalog.duckdb is rebuilt while another process holds it open read-only.

DuckDB lets no second process open a file its writer holds, so the catalog is built under a
temporary name and moved into place: the analyst's process keeps the old file (the old inode)
until it reconnects, and the rebuild never waits for it nor fails because of it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow as pa

from citeaudit import catalog, parquet_io

BIN = Path(sys.executable).parent

READER = """
import sys, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
print(con.sql("SELECT count(*) FROM answers").fetchall()[0][0], flush=True)
sys.stdin.readline()  # the parent rebuilds the catalog meanwhile
print(con.sql("SELECT count(*) FROM answers").fetchall()[0][0], flush=True)
print(",".join(sorted(r[0] for r in con.sql("SHOW TABLES").fetchall())), flush=True)
"""


def write_day(derived: Path, asset: str, date: str, rows: int) -> None:
    table = pa.table({"answer_id": [f"{date}-{i}" for i in range(rows)]})
    parquet_io.write_partition(table, derived, asset, {"observation_date": date})


def test_catalog_rebuild_while_another_process_reads_it(tmp_path: Path) -> None:
    derived = tmp_path / "derived"
    write_day(derived, "answers", "2026-11-01", 3)
    path = catalog.build(derived)
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert reader.stdout.readline().strip() == "3"
        # New data and a new asset arrive; the catalog is rebuilt by another process while
        # the reader still holds its read-only connection.
        write_day(derived, "answers", "2026-11-02", 4)
        write_day(derived, "claims", "2026-11-02", 2)
        done = subprocess.run(
            [str(BIN / "citeaudit"), "catalog", "--derived", str(derived)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        out, errors = reader.communicate("go\n", timeout=60)
    finally:
        if reader.poll() is None:
            reader.kill()
    assert reader.returncode == 0, errors
    # The open connection still reads its snapshot of the catalog (the old file): views over
    # the parquet glob see the new day's rows, and the catalog it opened has no `claims` view.
    lines = out.split()
    assert lines[0] == "7"
    assert lines[1] == "answers"
    fresh = duckdb.connect(str(path), read_only=True)
    try:
        assert fresh.sql("SELECT count(*) FROM answers").fetchall()[0][0] == 7
        assert fresh.sql("SELECT count(*) FROM claims").fetchall()[0][0] == 2
    finally:
        fresh.close()
    assert not list(derived.glob(".catalog.duckdb.tmp*")), "a temporary catalog was left behind"


# The catalog's upstream tables as they were kept by hand, before the asset graph gave them.
HAND_KEPT = {
    "answers", "claims", "citations", "rejected_inputs", "ignored_inputs", "captures",
    "claim_checks", "answer_checks", "metrics", "support_judgments", "rejected_annotations",
    "support_labels", "review_queue", "annotation_agreement", "support_evidence",
    "citation_captures", "citation_existence", "payload_texts", "passage_checks",
    "scholarly_records", "metadata_checks", "claim_independence", "source_risk_records",
    "rejected_records", "omission_endpoints", "source_risk_claim_ledger",
}


def test_catalog_depends_on_every_table_of_the_asset_graph() -> None:
    """The catalog's upstream assets come from the graph (every asset with a column schema:
    the data dictionary's tables): the hand-kept list's 26, plus the two archive tables it had
    missed though the catalog always made views of them, the comparisons stage's three and the
    graders' two."""
    import dagster as dg

    from pipelines.definitions import build_defs
    from pipelines.resources import PathsResource

    graph = build_defs(PathsResource()).resolve_asset_graph()
    upstream = {key.to_user_string() for key in graph.get(dg.AssetKey("catalog")).parent_keys}
    comparisons = {"comparison_units", "comparisons", "alerts", "cited_domains"}
    assert upstream == HAND_KEPT | {"fetched_captures", "fetch_log", "grader_judgments",
                                    "review_sample"} | comparisons
    assert upstream == set(catalog.dictionary()) - {catalog.COMMON}
    assert len(upstream) == 34
