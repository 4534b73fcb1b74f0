"""The metrics table: exact counts, unresolved beside (never inside), intervals, absent inputs.

Small contract-shaped parquet tables are written into a tmp derived folder and the ``metrics``
asset is materialized with Dagster; a last test runs the whole pipeline on a demo corpus.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from pathlib import Path

import dagster as dg
import duckdb
import numpy as np
import pyarrow.parquet as pq
import pytest
from _contract_tables import (
    DATE,
    VERSION,
    answer_rows,
    write_daily,
    write_existence,
    write_omission,
    write_support,
)

from assets.metrics import metrics as metrics_asset
from citeaudit.metrics import compute_partition
from citeaudit.stats import hajek_wilson, wilson
from pipelines import partitions
from pipelines.partitions import judged_key
from pipelines.resources import PathsResource
from tests.metrics.reference_metrics import counts_and_units


def materialize(derived: Path, date: str = DATE, version: str = VERSION) -> dg.MaterializeResult:
    """Materialize the metrics asset for one date × codebook on an ephemeral instance."""
    instance = dg.DagsterInstance.ephemeral()
    partitions.register(instance, answer_dates=[date], versions=[version])
    result = dg.materialize(
        [metrics_asset],
        partition_key=judged_key(date, version),
        instance=instance,
        resources={"paths": PathsResource(raw_dir=str(derived), derived_dir=str(derived))},
    )
    assert result.success
    return result


def read_rows(derived: Path, date: str = DATE, version: str = VERSION) -> list[dict]:
    path = derived / "metrics" / f"observation_date={date}" / f"codebook={version}"
    return pq.read_table(path / "data.parquet").to_pylist()


def row(rows: list[dict], metric: str, level: str = "overall", engine: str = "all",
        domain: str = "all", risk_band: str = "all") -> dict:
    hits = [r for r in rows if (r["metric"], r["margin"], r["engine"], r["domain"],
                                r["risk_band"]) == (metric, level, engine, domain, risk_band)]
    assert len(hits) == 1, (metric, level, engine, domain, risk_band, len(hits))
    return hits[0]


def test_support_rubric_example_eight_of_ten_with_unresolved_beside(tmp_path: Path) -> None:
    """The support rubric: 8 fully of 10 accessible reviewed pairs (1 partial, 1 unsupported) = 80%;
    2 unresolved pairs are reported beside, never in the denominator."""
    answers = [{**a, "engine": "gamma", "domain": "health", "risk_band": "high",
                "inclusion_prob": 1.0, "query_id": "q" + a["answer_id"]}
               for a in answer_rows(12)]
    labels = ["fully_supported"] * 8 + ["partially_supported", "unsupported"] + [
        "unresolved"] * 2
    write_daily(tmp_path, answers)
    write_support(tmp_path, {a["answer_id"]: lab for a, lab in zip(answers, labels,
                                                                      strict=True)})
    rows = compute_partition(tmp_path, DATE, VERSION).table.to_pylist()
    expect = wilson(8, 10)
    for level, engine, domain, band in (("overall", "all", "all", "all"),
                                        ("engine", "gamma", "all", "all"),
                                        ("domain", "all", "health", "all"),
                                        ("stratum", "gamma", "health", "high")):
        r = row(rows, "full_support_rate", level, engine, domain, band)
        assert (r["numerator"], r["denominator"], r["unresolved"]) == (8, 10, 2)
        assert r["estimate"] == pytest.approx(0.8)
        assert (r["ci_low"], r["ci_high"]) == (expect.low, expect.high)
        assert r["method"] == "wilson"
        assert json.loads(r["breakdown"]) == {"fully_supported": 8, "partially_supported": 1,
                                              "unsupported": 1, "unresolved": 2}
    # fail-closed precision: the lone partial citation is not needed for a full support
    # (its claim is only partially supported), so it counts 0; unresolved pairs are beside
    precision = row(rows, "citation_precision")
    assert (precision["numerator"], precision["denominator"], precision["unresolved"]) == (
        8, 10, 2)
    # Liu et al.'s precision counts the unresolved pairs as not supporting: 8 of 12
    liu = row(rows, "liu_citation_precision")
    assert (liu["numerator"], liu["denominator"], liu["unresolved"]) == (8, 12, 0)
    # no citation_existence, no omission_endpoints: said so, with no numbers at all
    for metric in ("existence_rate", "omission_rate", "metadata_mismatch_rate"):
        hits = [r for r in rows if r["metric"] == metric]
        assert len(hits) == 1 and hits[0]["reason"] == "input_missing", hits
        assert hits[0]["estimate"] is None and hits[0]["denominator"] is None
        assert "not a zero" in hits[0]["note"]


def test_metrics_asset_counts_weights_and_margins(tmp_path: Path) -> None:
    answers = answer_rows(24)
    ids = [a["answer_id"] for a in answers]
    w = {a["answer_id"]: 1.0 / a["inclusion_prob"] for a in answers}
    dom = {a["answer_id"]: a["domain"] for a in answers}
    states = dict(zip(ids[:22], (["pass"] * 3 + ["dead", "changed", "unresolved"]) * 4,
                      strict=False))  # a22, a23 have no existence row: unresolved too
    write_daily(
        tmp_path, answers,
        worthy={"a01": None, "a02": False},
        uncited={"a03", "a04"},
        rejected={"a05": "missing_citation", "a06": "hallucinated_citation"},
        tokens={"a07": None, "a08": 3000},
        rejected_lines=2,
    )
    states = {k: v for k, v in states.items() if k not in {"a03", "a04"}}
    write_existence(tmp_path, states)
    labels = dict(zip(ids, ["fully_supported", "partially_supported", "fully_supported",
                            "contradicted", "unresolved", "unsupported"] * 4, strict=True))
    labels = {k: v for k, v in labels.items() if k not in {"a03", "a04", "a10"}}
    write_support(tmp_path, labels)
    materialize(tmp_path)
    rows = read_rows(tmp_path)

    # existence: citations of every cited answer; unresolved and missing rows are unresolved
    cited = [i for i in ids if i not in {"a03", "a04"}]
    y = {i: {"pass": 1.0, "dead": 0.0, "changed": 0.0}.get(states.get(i, "")) for i in cited}
    resolved = [i for i in cited if y[i] is not None]
    r = row(rows, "existence_rate")
    assert r["numerator"] == sum(y[i] for i in resolved)
    assert r["denominator"] == len(resolved)
    assert r["unresolved"] == len(cited) - len(resolved)
    hajek = sum(w[i] * y[i] for i in resolved) / sum(w[i] for i in resolved)
    assert r["estimate"] == pytest.approx(hajek)
    queries = sorted({f"q{int(i[1:]) // 2:02d}" for i in resolved})
    assert (r["method"], r["weighting"], r["cluster_by"], r["n_clusters"]) == (
        "hajek_wilson", "inverse_inclusion_prob", "query", len(queries))
    expect = hajek_wilson([y[i] for i in resolved], [w[i] for i in resolved],
                         clusters=[int(i[1:]) // 2 for i in resolved])
    assert (r["ci_low"], r["ci_high"]) == pytest.approx((expect.low, expect.high))
    assert 0.0 <= r["ci_low"] <= r["estimate"] <= r["ci_high"] <= 1.0
    # beside it, the domain bootstrap (3 domains) as a sensitivity interval
    assert 0.0 <= r["domain_bootstrap_low"] <= r["estimate"] <= r["domain_bootstrap_high"]
    assert json.loads(r["breakdown"])["no_existence_row"] == 2

    # a one-domain margin whose weights vary would bootstrap by answer; here weights are
    # constant within a domain and each unit is its own answer, so the stratum row is Wilson
    s = row(rows, "existence_rate", "stratum", "alpha", "news", "low")
    units = [i for i in resolved if dom[i] == "news" and int(i[1:]) % 2 == 0]
    k = int(sum(y[i] for i in units))
    assert (s["numerator"], s["denominator"], s["method"]) == (k, len(units), "wilson")
    assert (s["ci_low"], s["ci_high"]) == (wilson(k, len(units)).low,
                                           wilson(k, len(units)).high)

    # margins: the engine rows partition the overall denominators and unresolved counts
    for metric in ("existence_rate", "full_support_rate", "verification_coverage"):
        total = row(rows, metric)
        engines = [row(rows, metric, "engine", e) for e in ("alpha", "beta")]
        assert sum(e["denominator"] for e in engines) == total["denominator"]
        assert sum(e["unresolved"] for e in engines) == total["unresolved"]
        domains = [row(rows, metric, "domain", "all", d) for d in ("health", "legal", "news")]
        assert sum(d["denominator"] for d in domains) == total["denominator"]

    # coverage: a01 worthiness unknown -> unresolved; a02 not worthy -> out; a03, a04 uncited
    cov = row(rows, "verification_coverage")
    assert (cov["numerator"], cov["denominator"], cov["unresolved"]) == (20, 22, 1)
    # recall: uncited worthy claims count as not supported; a10 cited but never reviewed
    rec = row(rows, "citation_recall")
    recall_units = {i: labels.get(i) for i in ids if i not in {"a01", "a02"}}
    breakdown = json.loads(rec["breakdown"])
    assert breakdown["uncited"] == 2 and breakdown["not_reviewed"] == 1
    assert breakdown["worthiness_unknown"] == 1
    fully = sum(1 for i, lab in recall_units.items() if lab == "fully_supported")
    assert rec["numerator"] == fully
    unresolved = sum(1 for lab in recall_units.values() if lab == "unresolved") + 1 + 1
    assert rec["unresolved"] == unresolved

    # the fail-closed verification rule: rejected answers, and tokens of served answers only
    # (no cost: unresolved)
    rej = row(rows, "fail_closed_rejection_rate")
    assert (rej["numerator"], rej["denominator"], rej["unresolved"]) == (2, 24, 0)
    cost = row(rows, "cost_per_served_answer")
    assert (cost["denominator"], cost["unresolved"]) == (21, 1)
    assert cost["estimate"] == pytest.approx((20 * 1000 + 3000) / 21)
    assert cost["ci_low"] < cost["estimate"] < cost["ci_high"]
    lines = row(rows, "input_rejection_rate")
    assert (lines["numerator"], lines["denominator"]) == (2, 26)
    assert json.loads(lines["breakdown"]) == {"accepted": 24, "rejected: missing_field": 2}
    assert not [r for r in rows if r["metric"] == "input_rejection_rate"
                and r["margin"] != "overall"]

    # omission_endpoints absent: one input_missing row and nothing else for that metric
    om = [r for r in rows if r["metric"] == "omission_rate"]
    assert [(r["verdict"], r["reason"], r["estimate"]) for r in om] == [
        ("unresolved", "input_missing", None)]

    # every computed row: unresolved never in the denominator, interval around the estimate
    for r in rows:
        if (r["verdict"], r["reason"]) == ("estimated", None) \
                and r["metric"] != "liu_citation_f1":  # F1: no count of its own
            assert r["denominator"] > 0 and r["estimate"] is not None
            if r["ci_low"] is not None:
                assert r["ci_low"] <= r["estimate"] <= r["ci_high"]


def test_recall_prefers_claim_level_rows_and_pairs_ignore_them(tmp_path: Path) -> None:
    """A claim-level support row (citation_id null) decides the claim for recall; it is not a
    claim-citation pair, so full-support and precision never count it."""
    answers = answer_rows(6)
    write_daily(tmp_path, answers)
    pairs = {"a00": "fully_supported", "a01": "unsupported", "a02": "unresolved",
             "a03": "partially_supported"}
    write_support(tmp_path, pairs, claim_level={"a01": "fully_supported",
                                                 "a03": "contradicted", "a04": "unsupported"})
    rows = compute_partition(tmp_path, DATE, VERSION).table.to_pylist()
    full = row(rows, "full_support_rate")
    assert (full["numerator"], full["denominator"], full["unresolved"]) == (1, 3, 1)
    rec = row(rows, "citation_recall")
    # a00 fully (pair), a01 fully (claim row wins), a02 unresolved, a03 contradicted,
    # a04 unsupported (claim row, no pair), a05 cited but not reviewed
    assert (rec["numerator"], rec["denominator"], rec["unresolved"]) == (2, 4, 2)
    assert json.loads(rec["breakdown"]) == {"fully_supported": 2, "unresolved": 1,
                                            "contradicted": 1, "unsupported": 1,
                                            "not_reviewed": 1}


def test_metrics_are_deterministic_and_follow_new_inputs(tmp_path: Path) -> None:
    answers = answer_rows(12)
    write_daily(tmp_path, answers)
    write_existence(tmp_path, {a["answer_id"]: ("pass", "dead", "unresolved")[i % 3]
                               for i, a in enumerate(answers)})
    path = tmp_path / "metrics" / f"observation_date={DATE}" / f"codebook={VERSION}"
    checks = {c.check_name: c for c in materialize(tmp_path).get_asset_check_evaluations()}
    assert checks["intervals_hold"].passed
    assert not checks["inputs_available"].passed  # WARN: omission, support ... not there
    assert "omission_rate" in checks["inputs_available"].metadata[
        "metrics_without_input"].value
    first = hashlib.sha256((path / "data.parquet").read_bytes()).hexdigest()
    materialize(tmp_path)
    assert hashlib.sha256((path / "data.parquet").read_bytes()).hexdigest() == first
    assert row(read_rows(tmp_path), "omission_rate")["reason"] == "input_missing"
    # the omission stage lands: its rows replace the input_missing row
    # (a tuple whose answer is not among the date's answers is unresolved, never dropped)
    write_omission(tmp_path, {"a00": (1, "CONTEXTUALIZE"), "a01": (0, "PASS"),
                              "a02": (None, "REVIEW"), "a03": (0, "PASS"),
                              "x99": (1, "CONTEXTUALIZE")})
    materialize(tmp_path)
    om = row(read_rows(tmp_path), "omission_rate")
    assert (om["verdict"], om["reason"], om["numerator"], om["denominator"],
            om["unresolved"]) == ("estimated", None, 1, 3, 2)
    assert json.loads(om["breakdown"]) == {"CONTEXTUALIZE": 1, "PASS": 2, "REVIEW": 1,
                                           "answer_not_on_date": 1}
    orphan = row(read_rows(tmp_path), "omission_rate", "engine", "unknown")
    assert (orphan["verdict"], orphan["reason"], orphan["unresolved"]) == (
        "unresolved", "no_resolved_units", 1)
    cc = row(read_rows(tmp_path), "omission_complete_case_coverage")
    assert (cc["numerator"], cc["denominator"], cc["unresolved"]) == (3, 4, 1)


def test_metrics_on_the_demo_pipeline_match_the_daily_tables(demo_run) -> None:
    """Through `citeaudit run` (the shared demo run): the fail-closed verification rows agree with
    answer_checks for every date."""
    derived = demo_run.derived
    con = duckdb.connect()
    checks = str(derived / "answer_checks" / "*" / "data.parquet")
    for date in ("2026-11-01", "2026-11-02"):
        expect = con.execute(
            "SELECT count(*) FILTER (WHERE verdict = 'rejected'), count(*), "
            "avg(input_tokens + output_tokens) FILTER (WHERE served) "
            "FROM read_parquet($glob, hive_partitioning = true) "
            "WHERE observation_date = $date::DATE",
            {"glob": checks, "date": date},
        ).fetchone()
        for version in ("v1", "v2"):
            rows = read_rows(derived, date, version)
            rej = row(rows, "fail_closed_rejection_rate")
            assert (rej["numerator"], rej["denominator"]) == (expect[0], expect[1])
            cost = row(rows, "cost_per_served_answer")
            assert cost["estimate"] == pytest.approx(expect[2])
            engines = {r["engine"] for r in rows if r["margin"] == "engine"}
            assert engines == {"perplexity", "copilot", "google_ai_overview", "inhouse_rag"}
            assert np.isfinite(row(rows, "verification_coverage")["ci_low"])


def test_units_kept_in_duckdb_give_the_in_memory_table_on_the_demo(
        demo_run, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pipeline's path (units counted and coded in DuckDB, only numbers read back, here in
    record batches of 500 units so their order is rebuilt from several batches) gives the
    table of the in-memory reference path (units as one Arrow table, a pandas frame),
    value for value, and the table `citeaudit run` wrote (one partition of each date)."""
    # the package exports the function `compute`, which hides the module of that name
    monkeypatch.setattr(importlib.import_module("citeaudit.metrics.compute"), "READ_ROWS", 500)
    for date, version in (("2026-11-01", "v1"), ("2026-11-02", "v2")):
        kept = compute_partition(demo_run.derived, date, version).table
        reference = compute_partition(demo_run.derived, date, version,
                                      units=counts_and_units).table
        assert kept.num_rows > 100
        assert sum(r["method"] == "hajek_wilson" for r in kept.to_pylist()) > 10
        assert kept.equals(reference), (date, version)
        written = pq.read_table(demo_run.derived / "metrics" / f"observation_date={date}"
                                / f"codebook={version}" / "data.parquet")
        assert kept.equals(written), (date, version)


def test_a_weighted_rate_of_100_percent_keeps_an_interval(tmp_path: Path) -> None:
    """All resolved units pass: the linearized variance is 0, so the effective sample size is
    Kish's over the queries' weight totals; the interval never claims certainty."""
    answers = answer_rows(24)
    write_daily(tmp_path, answers)
    write_existence(tmp_path, {a["answer_id"]: "pass" for a in answers})
    r = row(compute_partition(tmp_path, DATE, VERSION).table.to_pylist(), "existence_rate")
    assert (r["numerator"], r["denominator"], r["estimate"]) == (24, 24, 1.0)
    assert r["method"] == "hajek_wilson"
    totals = {}
    for a in answers:
        totals[a["query_id"]] = totals.get(a["query_id"], 0) + 1 / a["inclusion_prob"]
    n_eff = sum(totals.values()) ** 2 / sum(v * v for v in totals.values())
    assert r["ci_low"] == pytest.approx(n_eff / (n_eff + 1.959963984540054 ** 2))
    assert r["ci_high"] == 1.0


def test_grader_only_labels_are_beside_the_rate_not_in_it(tmp_path: Path) -> None:
    """A pair labelled by a grader alone is no human review (a grader is never its own gold):
    full support and precision count it as unresolved, category grader_only."""
    answers = answer_rows(4)
    write_daily(tmp_path, answers)
    write_support(tmp_path, {"a00": "fully_supported", "a01": "fully_supported",
                             "a02": "unsupported", "a03": "fully_supported"},
                  grader_only=frozenset({"a01", "a03"}))
    rows = compute_partition(tmp_path, DATE, VERSION).table.to_pylist()
    full = row(rows, "full_support_rate")
    assert (full["numerator"], full["denominator"], full["unresolved"]) == (1, 2, 2)
    assert json.loads(full["breakdown"]) == {"fully_supported": 1, "grader_only": 2,
                                             "unsupported": 1}
    rec = row(rows, "citation_recall")
    assert (rec["numerator"], rec["denominator"], rec["unresolved"]) == (1, 2, 2)
