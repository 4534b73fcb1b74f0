"""The demo's chain for the support rate from a review sample, on the shared demo run (no run of
its own): the planted truth of every citation, the judge stand-in answering from it over real
HTTP (the ``llm`` grader, the official SDK) at its set agreement, a sample drawn with the
judge's labels, the demo's annotators labelling it, the metrics row and the summary line that
show human-only and PPI side by side, and ``validate-grader`` on the stand-in."""

from __future__ import annotations

import csv
import json
import shutil
from collections import Counter

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from citeaudit import cli, codebook, duck, parquet_io
from citeaudit.demo_corpus import annotations
from citeaudit.demo_corpus.judge_standin import JudgeStandIn, agreeing_policy, demo_truth
from citeaudit.ingest import raw_check
from citeaudit.metrics.compute import compute_partition
from citeaudit.support import (
    adjudication,
    graders,
    judge,
    judgments,
    sample,
    summary,
)


def _human_items(raw) -> dict[tuple[str, str], list[str]]:
    items: dict[tuple[str, str], list[str]] = {}
    for path in sorted((raw / "annotations" / "support").glob("*.csv")):
        if "_" in path.stem:
            continue  # the planted bad rows
        with path.open(encoding="utf-8", newline="") as fh:
            for r in csv.DictReader(fh):
                if r["grader"] == "human":
                    items.setdefault((r["claim_id"], r["citation_id"]), []).append(r["label"])
    return items


def test_truth_is_what_people_label_from(demo_run) -> None:
    """Every pair people judged has a planted truth, and the truth is among its labels (the
    annotators start from it and at most some of them stray); the file is a known input."""
    truth = annotations.read_truth(demo_run.raw)
    items = _human_items(demo_run.raw)
    assert items and len(truth) > len(items)
    for key, labels in items.items():
        assert truth[key]["raw_label"] in labels, key
        assert truth[key]["label"] == annotations.V1_LABEL[truth[key]["raw_label"]]
    assert set(r["raw_label"] for r in truth.values()) == set(annotations.ALL_LABELS)
    assert not [r for r in raw_check.ignored_inputs(demo_run.raw).to_pylist()
                if r["path"] == annotations.SUPPORT_TRUTH]


def test_stand_in_agrees_at_its_rate() -> None:
    """The policy alone over many pairs: the share labelled as the truth is the set rate;
    a pair it does not know (or no pair header) is unresolved, never a guess."""
    labels = ("fully_supported", "partially_supported", "unsupported", "contradicted")
    truth = {f"clm-{i}/cit-{i}": labels[i % 4] for i in range(4000)}
    for rate in (0.5, 0.85):
        policy = agreeing_policy(truth, rate)
        agree = sum(policy("c", "p", 1, pair).label == want for pair, want in truth.items())
        assert agree / len(truth) == pytest.approx(rate, abs=0.02)
    assert agreeing_policy(truth)("c", "p", 1, None).label == "unresolved"
    assert agreeing_policy(truth)("c", "p", 1, "clm-x/cit-x").label == "unresolved"


@pytest.fixture
def judged(demo_run, tmp_path):
    """The last date's pairs graded by the llm grader through the stand-in (real HTTP), in a
    copy of the derived folder's grader_judgments; the raw folder copied without its WARCs."""
    raw = tmp_path / "raw"
    shutil.copytree(demo_run.raw, raw, ignore=shutil.ignore_patterns("warc"))
    date = demo_run.truth["dates"][-1]
    part = {"observation_date": date, "codebook": "v1"}
    book = codebook.load_version(raw, "v1")
    evidence = parquet_io.read_partition(demo_run.derived, "support_evidence", part)
    claims = parquet_io.read_partition(demo_run.derived, "claims", {"observation_date": date})
    truth = demo_truth(raw)
    with JudgeStandIn(agreeing_policy(truth, 0.85)) as server:
        settings = judge.Settings(base_url=server.base_url, model="citeaudit-judge-stand-in",
                                  rate=1000.0, concurrency=8, cache=raw / judge.CACHE_DIR)
        llm = judge.LLMGrader(book, settings)
        table = graders.grade_all([graders.LocatorGrader(book), llm],
                                  graders.items(evidence, claims))
    derived = tmp_path / "derived"
    for name in ("answers", "claims", "support_evidence", "support_judgments",
                 "support_labels", "citations", "claim_labels"):
        src = demo_run.derived / name
        if src.is_dir():
            shutil.copytree(src, derived / name)
    parquet_io.write_partition(table, derived, "grader_judgments", part)
    return raw, derived, date, part, table, truth


def test_the_demo_chain_shows_ppi_beside_human_only(judged, capsys) -> None:
    raw, derived, date, part, table, truth = judged
    llm = table.filter(pc.equal(table["grader"], "llm")).to_pylist()
    sent = [r for r in llm if r["request_sha256"]]
    assert len(sent) > 50
    known = [r for r in sent if f"{r['claim_id']}/{r['citation_id']}" in truth]
    agree = sum(r["verdict"] == truth[f"{r['claim_id']}/{r['citation_id']}"] for r in known)
    assert 0.75 <= agree / len(known) <= 0.95  # 85% by construction; pairs sharing a request
    # (same claim, same passage) share its reply

    # a sample drawn with the judge's labels, the demo's annotators label it
    assert cli.main(["sample", "--date", date, "--n", "60", "--by", "engine", "--grader",
                     "llm", "--codebook", "v1", "--raw", str(raw), "--derived",
                     str(derived)]) == 0
    capsys.readouterr()
    assert cli.main(["demo-label", "--raw", str(raw), "--date", date]) == 0
    said = capsys.readouterr().out
    assert "60 drawn pairs" in said and "_review_sample.csv" in said
    written = (raw / "annotations" / "support" / f"{date}_review_sample.csv").read_bytes()
    assert cli.main(["demo-label", "--raw", str(raw), "--date", date]) == 0
    assert (raw / "annotations" / "support" / f"{date}_review_sample.csv").read_bytes() == \
        written  # same sample, same rows

    # the support stage reads them (no rejection), every drawn pair is judged
    book = codebook.load_version(raw, "v1")
    accepted, rejected = judgments.judgments(judgments.classify(raw, derived, book), date)
    assert not [r for r in rejected.to_pylist() if "review_sample" in (r["source_file"] or "")]
    answers = parquet_io.read_partition(derived, "answers", {"observation_date": date})
    labels = adjudication.labels(accepted, answers, book)
    review = sample.review_sample(sample.read_optional(raw, date, "v1"), labels, table, "llm")
    status = Counter(r["status"] for r in review.to_pylist() if r["in_sample"])
    assert status["awaiting_label"] == 0 and status["labelled"] >= 40, status

    # metrics: human-only and PPI side by side; the judge tracks people, so PPI is narrower
    for name, t in (("support_labels", labels), ("review_sample", review)):
        parquet_io.write_partition(t, derived, name, part)
    rows = compute_partition(derived, date, "v1").table.to_pylist()
    row = next(r for r in rows if r["metric"] == "full_support_rate"
               and r["margin"] == "overall")
    assert row["ppi_grader"] == "llm" and row["ppi_reason"] is None, row["ppi_note"]
    assert row["ppi_note"].startswith("grader llm 1.0+citeaudit-judge-stand-in")  # named
    assert row["n_human"] == status["labelled"] and row["n_graded"] == len(llm)
    assert row["ppi_lambda"] > 0.2 and row["ppi_width_ratio"] < 0.95
    assert row["sample_ci_low"] <= row["sample_estimate"] <= row["sample_ci_high"]
    assert row["ppi_ci_low"] <= row["ppi_estimate"] <= row["ppi_ci_high"]

    # the other support rates say why the sample of pairs gives them no estimate
    for metric in ("citation_precision", "citation_recall", "liu_citation_precision"):
        other = next(r for r in rows if r["metric"] == metric and r["margin"] == "overall")
        assert other["ppi_reason"] == "not_a_pair_rate" and other["ppi_estimate"] is None
        assert "no estimate from the review sample" in other["ppi_note"]

    # validate-grader on the stand-in: it tracks the demo's people (by construction)
    capsys.readouterr()
    assert cli.main(["validate-grader", "project", str(derived), "--grader", "llm",
                     "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    overall = rep["labels"]["overall"]
    assert rep["grader"] == "llm" and rep["held_out"] > 30
    assert overall["balanced_accuracy"][0] > 0.75 and overall["cohen_kappa"][0] > 0.4, overall

    # the run summary's line, from the metrics table through its SQL
    con = duck.connect()
    try:
        con.register("metrics", pa.Table.from_pylist(
            [{**r, "observation_date": date, "codebook": "v1"} for r in rows]))
        lines = [summary.sample_rate_line(r)
                 for r in duck.query(con, "support/select_sample_rates").to_pylist()]
    finally:
        con.close()
    assert len(lines) == 1
    assert lines[0].startswith(f"{date} v1 full_support_rate: human-only "
                               f"{row['sample_estimate']:.3f} [")
    assert f"n={row['n_human']} | PPI {row['ppi_estimate']:.3f}" in lines[0]
    assert f"N={row['n_graded']} (grader llm" in lines[0]
    assert f"width ratio {row['ppi_width_ratio']:.2f}" in lines[0]


def test_demo_label_without_a_sample_says_what_to_do(demo_run, capsys) -> None:
    date = demo_run.truth["dates"][-1]
    assert cli.main(["demo-label", "--raw", str(demo_run.raw), "--date", date]) == 2
    err = capsys.readouterr().err
    assert "no review sample drawn" in err and "citeaudit sample --date" in err
