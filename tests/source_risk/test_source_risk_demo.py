"""The demo corpus through `citeaudit run`: source-risk outputs match the planted ground truth.

Every planted malformed line lands in rejected_records with its defect type (one or more of each
of the source-risk specification's twelve); every good tuple reaches omission_endpoints with the
current record's predicates, R_O and the policy action the codebook implies (computed here
independently).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from citeaudit.source_risk import contract


@pytest.fixture(scope="module")
def run(demo_run) -> tuple[Path, Path, dict]:
    """The shared demo run (conftest): a generated corpus through `citeaudit run`."""
    return demo_run.raw, demo_run.derived, demo_run.truth


def _rows(derived: Path, asset: str, version: str) -> list[dict]:
    out = []
    for path in sorted((derived / asset).glob(f"observation_date=*/codebook={version}/*.parquet")):
        out.extend(pq.read_table(path).to_pylist())
    return out


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_rejected_records_match_planted_defects(run, version) -> None:
    _, derived, truth = run
    planted = truth["source_risk"]["planted_defects"]
    assert {p["defect_type"] for p in planted} >= set(contract.SEED_DEFECTS)
    got = {(r["source_file"], r["source_line"], r["reason"])
           for r in _rows(derived, "rejected_records", version)}
    assert got == {(p["file"], p["line"], p["defect_type"]) for p in planted}


def _policy(e: dict, book: dict) -> str:
    """The codebook's policy stated independently of score_endpoints.sql."""
    if e["r_o"] is None:
        return "REVIEW"
    weights = book["priority_weights"]
    priority = sum(weights[k] * e["dimensions"][k] for k in weights)
    roles = {k for k, v in book["source_roles"].items() if v.get("requires_disclosure")}
    if e["r_o"] == 1:
        return "CONTEXTUALIZE"
    if e["source_role"] in roles and e["I"] == 1 and e["D"] == 0 \
            and priority > book["policy"]["contextualize_above"]:
        return "CONTEXTUALIZE"
    return "PASS"


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_omission_endpoints_match_ground_truth(run, version) -> None:
    raw, derived, truth = run
    book = yaml.safe_load((raw / "codebooks" / f"{version}.yaml").read_text(encoding="utf-8"))
    expected = {(e["answer_id"], e["source_url"]): e
                for e in truth["source_risk"]["expected_endpoints"]}
    got = {(r["answer_id"], r["source_url"]): r for r in _rows(derived, "omission_endpoints",
                                                                version)}
    assert set(got) == set(expected) and len(got) > 10
    for key, e in expected.items():
        r = got[key]
        assert (r["I"], r["A"], r["M"], r["D"], r["r_o"]) == \
            (e["I"], e["A"], e["M"], e["D"], e["r_o"]), key
        assert r["annotator_id"] == e["annotator_id"], key  # the revision is current
        assert r["policy_action"] == _policy(e, book), key
    actions = {r["policy_action"] for r in got.values()}
    assert {"REVIEW", "PASS", "CONTEXTUALIZE"} <= actions
    assert any(e["r_o"] is None for e in expected.values())


def test_revisions_link_to_parents_and_keep_the_tuple(run) -> None:
    _, derived, _ = run
    ledger = _rows(derived, "source_risk_records", "v1")
    by_digest = {r["record_digest"]: r for r in ledger}
    revisions = [r for r in ledger if r["parent_record"] is not None]
    assert revisions, "the demo plants revisions"
    for r in revisions:
        parent = by_digest[r["parent_record"]]
        assert parent["tuple_digest"] == r["tuple_digest"]
        assert parent["record_digest"] != r["record_digest"]
    import hashlib

    for r in ledger:
        assert hashlib.sha256(r["record_json"].encode()).hexdigest() == r["record_digest"]


def test_aligned_captures_are_used_when_present(run, tmp_path: Path) -> None:
    """With the alignment stage's citation_captures on disk, the source snapshot digest is the
    aligned payload's; without it, the record's URL (and the origin says which)."""
    import hashlib
    import shutil

    import pyarrow as pa

    from citeaudit import codebook, parquet_io
    from citeaudit.source_risk import audit

    raw, derived, truth = run
    date = truth["dates"][0]
    book = codebook.load_version(raw, "v1")
    # The real run has citation_captures on disk: snapshots come from the alignment stage.
    real = audit.audit(raw, derived, date, book)
    assert real.source_snapshots == "aligned_capture"

    local = tmp_path / "derived"
    for asset in ("answers", "citations"):
        shutil.copytree(derived / asset, local / asset)
    before = audit.audit(raw, local, date, book)
    assert set(before.records.column("source_snapshot_origin").to_pylist()) == {"record_url"}
    assert before.source_snapshots == "record_url"
    cites = parquet_io.read_partition(local, "citations", {"observation_date": date})
    urls = cites.column("url").to_pylist()
    caps = pa.table({
        "answer_id": cites.column("answer_id"), "claim_id": cites.column("claim_id"),
        "citation_id": cites.column("citation_id"), "url": cites.column("url"),
        "canonical_key": pa.array([None if u is None else "key:" + u for u in urls]),
        "capture_time": pa.array([None] * len(urls), pa.timestamp("us", tz="UTC")),
        "payload_sha256": pa.array([None if u is None else hashlib.sha256(u.encode()).hexdigest()
                                    for u in urls]),
    })
    parquet_io.write_partition(caps, local, "citation_captures",
                               {"observation_date": date, "codebook": "v1"})
    after = audit.audit(raw, local, date, book)
    assert after.source_snapshots == "aligned_capture"
    rows = after.records.to_pylist()
    assert rows and {r["source_snapshot_origin"] for r in rows} == {"aligned_capture"}
    for r in rows:
        assert r["source_snapshot_sha256"] == hashlib.sha256(r["source_url"].encode()).hexdigest()
        assert r["canonical_url"] == "key:" + r["source_url"]
    # the snapshot policy is part of the tuple identity
    assert not set(after.records.column("tuple_digest").to_pylist()) & set(
        before.records.column("tuple_digest").to_pylist())
    assert after.rejected.num_rows == before.rejected.num_rows
