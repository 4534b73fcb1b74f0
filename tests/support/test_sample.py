"""The review sample by design: allocation, a draw fixed by its seed, the Label Studio round
trip keeping each pair's inclusion probability, pairs labelled outside the sample kept but not
used, and the full-support rate human-only and prediction-powered beside it in ``metrics``."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from citeaudit import cli, codebook, parquet_io
from citeaudit.ingest import raw_check
from citeaudit.metrics.compute import METRICS_SCHEMA, compute_partition
from citeaudit.report import render
from citeaudit.support import adjudication, judgments, sample

# --- allocation and draw, on small tables -------------------------------------------------


def test_allocation_proportional_neyman_and_floors() -> None:
    sizes = {"a": 100, "b": 50, "c": 3}
    assert sample.allocate(sizes, dict.fromkeys(sizes, 0.5), 30, "proportional") == \
        {"a": 19, "b": 9, "c": 2}
    # Neyman: the stratum whose grader labels spread more gets more than its size's share
    ney = sample.allocate(sizes, {"a": 0.1, "b": 0.5, "c": 0.5}, 30, "neyman")
    assert ney["b"] > ney["a"] and sum(ney.values()) == 30 and ney["c"] >= 2
    # never more than the stratum, at least two (or the whole stratum)
    assert sample.allocate({"a": 1, "b": 10}, {"a": 1, "b": 1}, 5, "proportional") == \
        {"a": 1, "b": 4}
    with pytest.raises(sample.SampleError, match="below 2 per stratum"):
        sample.allocate(sizes, dict.fromkeys(sizes, 0.5), 5, "proportional")
    with pytest.raises(sample.SampleError, match="more than the 153 pairs"):
        sample.allocate(sizes, dict.fromkeys(sizes, 0.5), 200, "proportional")
    with pytest.raises(sample.SampleError, match="not a stratification key"):
        sample.parse_by("engine,colour")


def _frame(n: int = 60) -> pa.Table:
    rows = [{"answer_id": f"a{i // 3}", "claim_id": f"c{i:03d}", "citation_id": f"t{i:03d}",
             "engine": "e1" if i % 2 else "e2", "domain": "d",
             "verdict": "fully_supported" if i % 3 else "unsupported"} for i in range(n)]
    return pa.Table.from_pylist(rows)


def test_draw_is_fixed_by_its_seed_not_by_row_order() -> None:
    frame = _frame()
    one = sample.draw(frame, 12, ("engine", "grader_label"), "proportional", 5, "D", "v1", "g")
    shuffled = frame.take(list(reversed(range(frame.num_rows))))
    two = sample.draw(shuffled, 12, ("engine", "grader_label"), "proportional", 5, "D", "v1",
                      "g")
    assert one.equals(two)
    other = sample.draw(frame, 12, ("engine", "grader_label"), "proportional", 6, "D", "v1",
                        "g")
    assert one.column("claim_id").to_pylist() != other.column("claim_id").to_pylist()
    # Horvitz-Thompson: the inverse inclusion probabilities of the drawn pairs sum to the frame
    assert sum(1 / p for p in one.column("inclusion_prob").to_pylist()) == pytest.approx(60)
    assert set(one.column("stratum").to_pylist()) == {
        "engine=e1|grader_label=fully_supported", "engine=e1|grader_label=unsupported",
        "engine=e2|grader_label=fully_supported", "engine=e2|grader_label=unsupported"}


def test_sample_file_round_trip(tmp_path) -> None:
    drawn = sample.draw(_frame(), 10, ("engine",), "proportional", 1, "D", "v1", "g")
    path = tmp_path / "s.csv"
    sample.write(drawn, path)
    assert sample.read(path).equals(drawn)
    path.write_text(path.read_text().replace(",0.1666", ",1.5666", 1))
    with pytest.raises(sample.SampleError, match="line 2: inclusion_prob"):
        sample.read(path)


# --- end to end on the shared demo run (read only; private copies of what changes) --------


def _human_label(claim_id: str, citation_id: str) -> str:
    """A stand-in reviewer: a fixed label per pair, independent of any grader."""
    return "supports" if hashlib.sha256(f"{claim_id}/{citation_id}".encode()).digest()[0] \
        < 160 else "no_support"


def _ls_export(tasks: list[dict]) -> list[dict]:
    return [{**copy.deepcopy(t), "id": i, "annotations": [{
        "completed_by": "ann-01", "created_at": "2026-11-03T10:00:00Z",
        "result": [{"type": "choices", "from_name": "support", "to_name": "claim",
                    "value": {"choices": [_human_label(t["data"]["claim_id"],
                                                       t["data"]["citation_id"])]}}]}]}
        for i, t in enumerate(tasks)]


@pytest.fixture
def drawn(demo_run, tmp_path):
    """A copy of the demo's raw folder without support annotations, a sample drawn and its
    tasks exported."""
    raw = tmp_path / "raw"
    shutil.copytree(demo_run.raw, raw, ignore=shutil.ignore_patterns("warc", "support"))
    (raw / "annotations" / "support").mkdir()
    date = demo_run.truth["dates"][0]
    tasks_path = tmp_path / "tasks.json"
    code = cli.main(["sample", "--date", date, "--n", "40", "--by", "engine,grader_label",
                     "--codebook", "v1", "--raw", str(raw), "--derived", str(demo_run.derived),
                     "--out", str(tasks_path)])
    assert code == 0
    return raw, date, json.loads(tasks_path.read_text(encoding="utf-8")), tmp_path


def test_sample_round_trip_keeps_inclusion_probabilities(demo_run, drawn, capsys) -> None:
    raw, date, tasks, tmp = drawn
    file_rows = {(r["claim_id"], r["citation_id"]): r for r in
                 sample.read(sample.sample_path(raw, date, "v1")).to_pylist()}
    assert len(tasks) == 40 == len(file_rows)
    for t in tasks:
        row = file_rows[(t["data"]["claim_id"], t["data"]["citation_id"])]
        assert t["data"]["inclusion_prob"] == row["inclusion_prob"]
        assert t["data"]["sample_id"] == row["sample_id"]
    # the sample file is a known input: `citeaudit check` does not list it as ignored
    assert not [r for r in raw_check.ignored_inputs(raw).to_pylist()
                if r["path"].startswith("annotations/samples")]
    # drawing again over it needs --replace
    assert cli.main(["sample", "--date", date, "--n", "40", "--codebook", "v1", "--raw",
                     str(raw), "--derived", str(demo_run.derived)]) == 2
    assert "--replace" in capsys.readouterr().out

    # a tampered export is rejected whole, naming the task and the field
    bad = _ls_export(tasks)
    bad[3]["data"]["inclusion_prob"] = 0.5
    (tmp / "bad.json").write_text(json.dumps(bad))
    assert cli.main(["review", "import", str(tmp / "bad.json"), "--raw", str(raw)]) == 2
    assert "task[3].data.inclusion_prob: 0.5, the sample file says" in capsys.readouterr().out

    # people label the sample, and one pair outside it (a review-queue task: no sample_id)
    export = _ls_export(tasks)
    graded = parquet_io.read_partition(demo_run.derived, "grader_judgments",
                                       {"observation_date": date, "codebook": "v1"})
    outside = next(r for r in graded.to_pylist() if (r["claim_id"], r["citation_id"])
                   not in file_rows)
    export.append({"id": 999, "data": {"claim_id": outside["claim_id"],
                                       "citation_id": outside["citation_id"],
                                       "codebook_version": "v1"},
                   "annotations": _ls_export([{"data": {
                       "claim_id": outside["claim_id"],
                       "citation_id": outside["citation_id"]}}])[0]["annotations"]})
    (tmp / "export.json").write_text(json.dumps(export))
    assert cli.main(["review", "import", str(tmp / "export.json"), "--raw", str(raw)]) == 0

    # the support stage reads the imported rows; review_sample joins them to the design
    book = codebook.load_version(raw, "v1")
    accepted, rejected = judgments.judgments(judgments.classify(raw, demo_run.derived, book),
                                             date)
    assert rejected.num_rows == 0 and accepted.num_rows == 41
    answers = parquet_io.read_partition(demo_run.derived, "answers", {"observation_date": date})
    labels = adjudication.labels(accepted, answers, book)
    review = sample.review_sample(sample.read_optional(raw, date, "v1"), labels, graded,
                                  "locator")
    rows = {(r["claim_id"], r["citation_id"]): r for r in review.to_pylist()}
    for key, design in file_rows.items():
        assert rows[key]["in_sample"] and rows[key]["status"] == "labelled"
        assert rows[key]["inclusion_prob"] == design["inclusion_prob"]
        assert rows[key]["stratum"] == design["stratum"]
    kept = rows[(outside["claim_id"], outside["citation_id"])]
    assert not kept["in_sample"] and kept["status"] == "outside_sample"
    assert kept["inclusion_prob"] is None

    # the rates: design-based human-only and PPI, 40 people's labels, 173-ish graded pairs
    rates = sample.ppi_rates(review, graded, "locator")
    overall = next(r for r in rates if r["margin"] == "overall")
    res = overall["result"]
    assert overall["reason"] is None and overall["outside"] == 1
    assert res.n == 40 and graded.filter(pc.equal(graded["grader"], "locator")
                                                  ).num_rows == res.N
    assert res.low <= res.estimate <= res.high and res.width_ratio <= 1
    assert res.human_low <= res.human_estimate <= res.human_high
    assert {r["engine"] for r in rates if r["margin"] == "engine"} == \
        set(answers.column("engine").to_pylist()) & {r["engine"] for r in file_rows.values()}
    assert not any(r["margin"] == "domain" for r in rates)  # not stratified by domain

    # in the metrics table, beside the human-only estimate over every labelled pair
    derived = tmp / "derived"
    shutil.copytree(demo_run.derived, derived, ignore=shutil.ignore_patterns("report"))
    part = {"observation_date": date, "codebook": "v1"}
    for name, table in (("support_labels", labels), ("review_sample", review)):
        parquet_io.write_partition(table, derived, name, part)
    metrics = compute_partition(derived, date, "v1").table.to_pylist()
    row = next(r for r in metrics if r["metric"] == "full_support_rate"
               and r["margin"] == "overall")
    assert row["ppi_estimate"] == pytest.approx(res.estimate)
    assert row["sample_estimate"] == pytest.approx(res.human_estimate)
    assert (row["n_human"], row["n_graded"], row["ppi_grader"]) == (40, res.N, "locator")
    assert "1 pairs labelled outside the sample" in row["ppi_note"]
    assert row["ppi_note"].startswith("grader locator 1.0+")

    # the report's support section shows both side by side
    parquet_io.write_partition(pa.Table.from_pylist(metrics, schema=METRICS_SCHEMA), derived,
                               "metrics", part)
    page = render.build(derived, date, "v1").path.read_text(encoding="utf-8")
    section = page[page.index('id="support-ppi"'):]
    section = section[:section.index("</section>")]
    assert "human-only (95% CI)" in section and "PPI (95% CI)" in section
    assert f"{res.estimate:.3f} [{res.low:.3f}, {res.high:.3f}]" in section
    assert f"{res.human_estimate:.3f} [{res.human_low:.3f}, {res.human_high:.3f}]" in section


def test_frame_changed_is_no_estimate(demo_run, drawn) -> None:
    """When the graded pairs no longer match the frame the sample was drawn from, the PPI
    columns say so instead of estimating over the wrong strata."""
    raw, date, _, _ = drawn
    part = {"observation_date": date, "codebook": "v1"}
    graded = parquet_io.read_partition(demo_run.derived, "grader_judgments", part)
    labels = parquet_io.read_partition(demo_run.derived, "support_labels", part)
    fewer = graded.slice(1)
    review = sample.review_sample(sample.read_optional(raw, date, "v1"), labels, fewer,
                                  "locator")
    rates = sample.ppi_rates(review, fewer, "locator")
    assert [r["reason"] for r in rates] == ["frame_changed"]
    # a sample drawn with a grader that did not run this time (the judge is off)
    none = graded.filter(pc.equal(graded["grader"], "llm"))
    rates = sample.ppi_rates(sample.review_sample(sample.read_optional(raw, date, "v1"),
                                                  labels, none, "locator"), none, "locator")
    assert [r["reason"] for r in rates] == ["grader_missing"]


def test_no_sample_is_said(demo_run) -> None:
    """Without a drawn sample the metrics row and the report say so: no design-based rate,
    and no grader-only rate in its place."""
    date = demo_run.truth["dates"][0]
    page = next(demo_run.derived.glob(f"report/observation_date={date}/codebook=v1/*.html"))
    assert "No review sample has been drawn" in page.read_text(encoding="utf-8")
    part = {"observation_date": date, "codebook": "v1"}
    rows = parquet_io.read_partition(demo_run.derived, "metrics", part).to_pylist()
    row = next(r for r in rows if r["metric"] == "full_support_rate"
               and r["margin"] == "overall")
    assert row["ppi_reason"] == "no_sample" and row["ppi_estimate"] is None


def test_pairs_people_judged_unresolved_leave_the_denominator() -> None:
    """Pages nobody can read: every drawn pair of a stratum judged unresolved. The rate is
    among resolvable pairs (a ratio estimator): that stratum adds nothing to either total,
    the day keeps its estimate and the note counts the unresolved pairs; the stratum's own
    rate has no resolved unit."""
    graded, review = [], []
    for engine, size, drawn_n in (("e1", 12, 6), ("e2", 5, 2)):
        for i in range(size):
            key = {"claim_id": f"c-{engine}-{i}", "citation_id": "t", "answer_id": f"a{i}",
                   "engine": engine, "domain": "d"}
            verdict = "fully_supported" if i % 3 else "unsupported"
            graded.append({**key, "grader": "llm", "verdict": verdict})
            if i < drawn_n:
                human = ("unresolved" if engine == "e2" else
                         "fully_supported" if i % 2 else "unsupported")
                review.append({**key, "in_sample": True, "stratum": f"engine={engine}",
                               "stratum_size": size, "grader": "llm",
                               "status": "label_unresolved" if human == "unresolved"
                               else "labelled", "human_verdict": human,
                               "grader_verdict": verdict})
    rates = sample.ppi_rates(pa.Table.from_pylist(review), pa.Table.from_pylist(graded), "llm")
    overall = next(r for r in rates if r["margin"] == "overall")
    res = overall["result"]
    assert overall["reason"] is None and res.N == 17
    assert (res.n, res.n_unresolved, overall["unresolved"]) == (6, 2, 2)
    # the rate among resolvable pairs is e1's: the unresolved stratum is not a 0 of the rate
    e1 = next(r for r in rates if r["margin"] == "engine" and r["engine"] == "e1")
    assert res.human_estimate == pytest.approx(e1["result"].human_estimate) == \
        pytest.approx(0.5)
    e2 = next(r for r in rates if r["margin"] == "engine" and r["engine"] == "e2")
    assert e2["result"].estimate is None and e2["reason"] == "no_resolved_units"
    # one pair of e2 not judged yet: e2 has one judged pair of five, so no interval
    review[-1] = {**review[-1], "status": "awaiting_label", "human_verdict": None}
    rates = sample.ppi_rates(pa.Table.from_pylist(review), pa.Table.from_pylist(graded), "llm")
    overall = next(r for r in rates if r["margin"] == "overall")
    assert overall["reason"] == "no_interval" and overall["missing"] == 1
    assert overall["result"].estimate == pytest.approx(0.5)
