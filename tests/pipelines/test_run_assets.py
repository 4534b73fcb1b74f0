"""Assets through `citeaudit run` on tmp folders: outputs, idempotence, the catalog, the summary."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb
import pytest
from ops_support import daily_assets, digests, judged_assets

from citeaudit import catalog, cli
from pipelines.definitions import build_defs
from pipelines.resources import PathsResource


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_run_writes_every_asset_and_a_rerun_gives_the_same_bytes(
    demo_run, demo_rerun, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """The shared demo run wrote every asset; the shared rerun (`citeaudit run` again over a
    private copy of its outputs and run history, same raw folder) printed the summary and
    rewrote the same bytes: every output file, the HTML reports too."""
    first = digests(demo_run.derived)
    derived = demo_rerun.derived
    out = (demo_rerun.home.parent / "summary.txt").read_text(encoding="utf-8")
    assert "answers verified (served)" in out and "catalog.duckdb" in out
    assets = {k.split("/")[0] for k in first}
    assert assets == {
        "answers",
        "claims",
        "citations",
        "rejected_inputs",
        "fetched_captures",
        "fetch_log",
        "ignored_inputs",
        "captures",
        "claim_checks",
        "answer_checks",
        "metrics",
        "support_judgments",
        "rejected_annotations",
        "support_labels",
        "review_queue",
        "annotation_agreement",
        "support_evidence",
        "grader_judgments",
        "review_sample",
        "citation_captures",
        "citation_existence",
        "payload_texts",
        "passage_checks",
        "scholarly_records",
        "metadata_checks",
        "claim_independence",
        "source_risk_records",
        "rejected_records",
        "omission_endpoints",
        "source_risk_claim_ledger",
        "report",
        "comparison_units",
        "comparisons",
        "alerts",
        "cited_domains",
    }
    assert set(judged_assets()) <= assets and set(daily_assets()) <= assets
    assert not list(demo_run.derived.rglob("*.tmp")), "a temporary file was left behind"
    assert not list(derived.rglob("*.tmp")), "a temporary file was left behind"
    assert digests(derived) == first


def test_catalog_rebuild_while_an_analyst_has_it_open(demo_run, tmp_path: Path) -> None:
    derived = demo_run.copy(tmp_path / "copy").derived  # the outputs of a real run
    catalog.build(derived)
    reader = duckdb.connect(str(derived / catalog.CATALOG_FILE), read_only=True)
    # a view per table of the run: exactly the tables the catalog asset depends on
    views = {r[0] for r in reader.sql("SHOW TABLES").fetchall()}
    graph = build_defs(PathsResource()).resolve_asset_graph()
    assert views == {k.to_user_string() for k in graph.get(dg.AssetKey("catalog")).parent_keys}
    before = reader.sql("SELECT count(*) FROM answer_checks").fetchall()[0][0]
    catalog.build(derived)  # a second process-like writer replaces the file under the reader
    assert reader.sql("SELECT count(*) FROM answer_checks").fetchall()[0][0] == before
    reader.close()
    again = duckdb.connect(str(derived / catalog.CATALOG_FILE), read_only=True)
    assert again.sql("SELECT count(*) FROM answer_checks").fetchall()[0][0] == before
    again.close()


def test_run_reports_clear_errors(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture
) -> None:
    assert cli.main(["run", "--raw", str(tmp_path / "nowhere")]) == 2
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert cli.main(["run", "--raw", str(tmp_path / "empty")]) == 2
    assert "no answers/<YYYY-MM-DD>/ or warc/<YYYY-MM-DD>/ folders" in capsys.readouterr().err


def test_asset_checks_judge_the_contract(tmp_path: Path) -> None:
    """A date with many broken lines materializes (the batch goes on) but WARNs on its share."""
    from assets.ingest import ingest_answers

    folder = tmp_path / "raw" / "answers" / "2026-11-05"
    folder.mkdir(parents=True)
    good = (
        '{"answer_id":"a1","query_id":"q","query_text":"q","engine":"perplexity",'
        '"observed_at":"2026-11-05T08:00:00Z","answer_text":"None.","claims":[],'
        '"strata":{"domain":"news","risk_band":"low","inclusion_prob":1}}'
    )
    (folder / "p.jsonl").write_text(good + "\n{oops\n")
    resources = {
        "paths": PathsResource(raw_dir=str(tmp_path / "raw"), derived_dir=str(tmp_path / "d"))
    }
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("observation_date", ["2026-11-05"])
        result = dg.materialize(
            [ingest_answers], partition_key="2026-11-05", instance=instance, resources=resources
        )
    assert result.success
    checks = {e.check_name: e for e in result.get_asset_check_evaluations()}
    assert checks["unique_ids"].passed and checks["no_orphans"].passed
    assert not checks["rejected_share"].passed
    assert checks["rejected_share"].severity == dg.AssetCheckSeverity.WARN
    meta = result.asset_materializations_for_node("ingest_answers")
    assert {m.asset_key.path[0]: m.metadata["dagster/row_count"].value for m in meta} == {
        "answers": 1,
        "claims": 0,
        "citations": 0,
        "rejected_inputs": 1,
    }
