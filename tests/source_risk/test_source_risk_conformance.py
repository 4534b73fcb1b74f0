"""The conformance suite of the source-risk audit specification (its conformance suite,
docs/references.md#source-risk-audit), run from the implementation, must print the paper's
counts. The expected numbers below are the specification's published figures."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def materialized(tmp_path_factory) -> Path:
    """The suite run once, as the Dagster asset runs it: its derived folder."""
    import dagster as dg

    from assets.source_risk_conformance import source_risk_conformance
    from pipelines.resources import PathsResource

    tmp = tmp_path_factory.mktemp("conformance")
    derived = tmp / "derived"
    result = dg.materialize(
        [source_risk_conformance],
        resources={"paths": PathsResource(raw_dir=str(tmp / "raw"), derived_dir=str(derived))},
        instance=dg.DagsterInstance.ephemeral(),
    )
    assert result.success
    return derived


@pytest.fixture(scope="module")
def suite(materialized: Path) -> tuple[dict, Path]:
    """The counts the suite returned (its counts.json) and its evidence files."""
    out = materialized / "source_risk_conformance" / "files"
    return json.loads((out / "counts.json").read_text(encoding="utf-8")), out


def test_oracle_agreement(suite) -> None:
    c, _ = suite
    assert (c["oracle_agreement"], c["states"]) == (81, 81)
    assert (c["positives"], c["negatives"], c["unresolved"]) == (1, 15, 65)


def test_table2_baselines(suite) -> None:
    t = suite[0]["table2"]
    assert t["support_only/none"] == {"mismatches": 1, "resolutions": 65, "unresolved": 0}
    for rule in ("relationship_only", "disclosure_only"):
        assert t[f"{rule}/none"]["mismatches"] == 7
        assert t[f"{rule}/none"]["resolutions"] == 38
        assert t[f"{rule}/common"] == {"mismatches": 7, "resolutions": 0, "unresolved": 65}
    assert t["support_only/common"] == {"mismatches": 1, "resolutions": 0, "unresolved": 65}
    assert 16 - t["support_only/common"]["mismatches"] == 15


def test_ablations_and_coverage(suite) -> None:
    c, _ = suite
    assert c["ablation_added_positives"] == {"drop_I": 1, "drop_A": 1, "drop_M": 1, "drop_D": 1}
    assert c["drop_dq_changed"] == 0
    assert (c["short_circuit_resolved"], c["complete_case_resolved"]) == (66, 16)


def test_transitions_and_flips(suite) -> None:
    c, _ = suite
    assert c["evidence_removal_transitions"] == c["evidence_removal_unresolved"] == 216
    assert c["support_toggles"] == c["support_toggles_unchanged"] == 81
    assert c["dq_sweep_checks"] == c["dq_sweep_unchanged"] == 891
    assert c["flip_pairs"] == c["flip_pairs_direction_ok"] == 32
    assert c["d_flip_removal_states"] == ["1110"]
    assert c["d_flip_unchanged_negative"] == 7


def test_round_trips_and_mutations(suite) -> None:
    c, out = suite
    assert c["round_trips"] == 81
    assert c["mutations"] == c["mutations_rejected"] == c["mutations_expected_type"] == 192
    assert c["mutation_types"] == 12
    with (out / "mutations.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert all(r["found_defect"] == r["intended_defect"] for r in rows)
    unsealed = {r["intended_defect"] for r in rows if r["resealed"] == "False"}
    assert unsealed == {"identity_mismatch", "source_snapshot_checksum",
                        "answer_snapshot_checksum", "record_checksum"}


def test_manifest_binds_every_file(suite) -> None:
    _, out = suite
    listed = {}
    for line in (out / "manifest.sha256").read_text(encoding="utf-8").splitlines():
        digest, name = line.split("  ", 1)
        listed[name] = digest
    files = {p.name for p in out.iterdir() if p.name != "manifest.sha256"}
    assert set(listed) == files
    for name, digest in listed.items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest


def test_tables_render(suite, capsys) -> None:
    from citeaudit.source_risk.conformance.cli import render

    c, out = suite
    render(c, out)
    text = capsys.readouterr().out
    assert "81/81" in text and "66/81" in text and "1110" in text


def test_conformance_asset_materializes(materialized: Path) -> None:
    """The suite as an unpartitioned Dagster asset: Table III parquet plus the evidence files."""
    import pyarrow.parquet as pq

    rows = pq.read_table(materialized / "source_risk_conformance" / "data.parquet").to_pylist()
    assert {r["check"]: (r["passed"], r["total"]) for r in rows}[
        "mutations rejected with the expected type"] == (192, 192)
    assert all(r["passed"] == r["total"] for r in rows)
    assert (materialized / "source_risk_conformance" / "files" / "manifest.sha256").is_file()

