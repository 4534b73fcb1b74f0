"""Support judgments end to end on the demo corpus (real Dagster runs, real parquet), and the
adjudication, queue and agreement rules on small hand-made judgment tables."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from citeaudit.codebook import load_version
from citeaudit.support import adjudication, agreement, judgments


@pytest.fixture(scope="module")
def run(demo_run) -> tuple[Path, Path]:
    """The shared demo run (conftest): a generated corpus through `citeaudit run`."""
    return demo_run.raw, demo_run.derived


def table(derived: Path, asset: str, version: str | None = None) -> list[dict]:
    glob = (derived / asset / "*" / "*" / "data.parquet").as_posix()
    con = duckdb.connect()
    rel = con.sql(f"SELECT * FROM read_parquet('{glob}', hive_partitioning = true)")
    rows = rel.to_arrow_table().to_pylist()
    return [r for r in rows if version is None or r["codebook"] == version]


def test_planted_bad_rows_are_rejected_with_reasons_under_every_codebook(run) -> None:
    raw, derived = run
    truth = json.loads((raw / "ground_truth.json").read_text())
    planted = truth["support"]["planted"]
    assert {p["reason"] for p in planted} >= {
        "unknown_annotator", "unknown_label", "duplicate_judgment", "orphan_claim",
        "orphan_citation", "unknown_codebook_version", "grader_mismatch", "wrong_column_count"}
    for version in ("v1", "v2"):
        rejected = table(derived, "rejected_annotations", version)
        got = sorted((r["source_file"], r["source_line"], r["reason"], r["field"])
                     for r in rejected)
        want = sorted((p["file"], p["line"], p["reason"], p["field"]) for p in planted)
        assert got == want
        assert all(r["source"] == "support_annotations" and r["detail"] for r in rejected)
    # the rest proceeds: every clean row of the day files is a judgment, once
    clean = 0
    for d in truth["dates"]:
        with open(raw / "annotations" / "support" / f"{d}.csv", encoding="utf-8") as fh:
            clean += sum(1 for _ in csv.DictReader(fh))
    assert clean == truth["support"]["rows"]
    for version in ("v1", "v2"):
        judged = table(derived, "support_judgments", version)
        assert len(judged) == clean
        assert all(r["source_file"].endswith(f"{r['observation_date']}.csv") for r in judged)


def test_v2_remap_changes_v2_numbers_and_nothing_of_v1(run) -> None:
    raw, derived = run
    v1 = {(r["claim_id"], r["citation_id"], r["annotator_id"]): r
          for r in table(derived, "support_judgments", "v1")}
    v2 = {(r["claim_id"], r["citation_id"], r["annotator_id"]): r
          for r in table(derived, "support_judgments", "v2")}
    assert v1.keys() == v2.keys()
    partial = [k for k, r in v1.items() if r["raw_label"] == "partial"]
    assert partial, "the demo must hold partial judgments"
    for k in v1:
        if v1[k]["raw_label"] == "partial":
            assert (v1[k]["verdict"], v2[k]["verdict"]) == ("partially_supported", "unsupported")
        else:
            assert v1[k]["verdict"] == v2[k]["verdict"]
    c1 = Counter(r["verdict"] for r in table(derived, "support_labels", "v1"))
    c2 = Counter(r["verdict"] for r in table(derived, "support_labels", "v2"))
    assert c1 != c2 and c2["partially_supported"] == 0 and c1["partially_supported"] > 0
    assert c2["unsupported"] > c1["unsupported"]
    assert sum(c1.values()) == sum(c2.values())
    # items with no partial vote keep their label
    l1 = {(r["claim_id"], r["citation_id"]): r for r in table(derived, "support_labels", "v1")}
    l2 = {(r["claim_id"], r["citation_id"]): r for r in table(derived, "support_labels", "v2")}
    for key, r in l1.items():
        if r["n_partially_supported"] == 0:
            assert l2[key]["verdict"] == r["verdict"]
    # That a v1-only run writes exactly the bytes of v1 in a run of both codebooks (v2 touched
    # nothing of v1) is checked on the small shared corpus, whose codebooks also disagree on a
    # partial label: tests/storage/test_s3_run.py.


def test_labels_queue_and_agreement_are_consistent(run) -> None:
    raw, derived = run
    for version in ("v1", "v2"):
        book = load_version(raw, version)
        labels = table(derived, "support_labels", version)
        queue = table(derived, "review_queue", version)
        assert {(r["claim_id"], r["citation_id"]) for r in labels if r["queued"]} == \
            {(r["claim_id"], r["citation_id"]) for r in queue}
        for r in labels:
            votes = [r[f"n_{lab}"] for lab in ("fully_supported", "partially_supported",
                                               "unsupported", "contradicted", "unresolved")]
            assert sum(votes) == r["n_judgments"]
            if r["tie"] or r["verdict"] in ("partially_supported", "unresolved"):
                assert r["queued"]
            if r["domain"] in book.high_risk_domains:
                assert r["queued"]
            if r["tie"]:
                assert r["verdict"] == "unresolved" and ";" in r["human_votes"]
        assert any(r["tie"] for r in labels) and any(r["disagreement"] for r in labels)
        stats = table(derived, "annotation_agreement", version)
        overall = [r for r in stats if r["stratum"] == "overall"]
        alpha = [r for r in overall if r["statistic"] == "krippendorff_alpha"]
        assert len(alpha) == len({r["observation_date"] for r in labels})
        assert all(0.5 < a["value"] < 1 for a in alpha)
        assert any(r["statistic"] == "cohen_kappa" for r in overall)
        confusion = [r for r in overall if r["statistic"] == "confusion"]
        assert confusion and all(r["annotator_b"] == agreement.HUMAN_GOLD for r in confusion)
        assert {r["stratum"].split("=")[0] for r in stats} == {"overall", "engine", "domain"}


# ----------------------------------------------------------------- rules on hand-made tables
J_SCHEMA = pa.schema([("answer_id", pa.string()), ("claim_id", pa.string()),
                      ("citation_id", pa.string()), ("atom_id", pa.string()),
                      ("annotator_id", pa.string()), ("is_human", pa.bool_()),
                      ("verdict", pa.string())])
F, P, U, C, R = ("fully_supported", "partially_supported", "unsupported", "contradicted",
                 "unresolved")


def judged(rows: list[tuple]) -> pa.Table:
    return pa.Table.from_pylist(
        [dict(zip(J_SCHEMA.names, r, strict=True)) for r in rows], schema=J_SCHEMA)


def answers(domains: dict[str, str]) -> pa.Table:
    return pa.table({"answer_id": list(domains), "engine": ["e"] * len(domains),
                     "domain": list(domains.values())})


class Book:
    """The three codebook fields the labels step reads."""

    def __init__(self, rate: float = 0.0, seed: int = 7) -> None:
        from citeaudit.codebook import ReviewSampling

        self.high_risk_domains = ("health",)
        self.review_sampling = ReviewSampling(rate, seed)


def test_majority_tie_atoms_and_grader_rules() -> None:
    rows = [
        # majority 2:1 -> fully, disagreement kept
        ("a1", "c1", "x1", None, "h1", True, F), ("a1", "c1", "x1", None, "h2", True, F),
        ("a1", "c1", "x1", None, "h3", True, P),
        # 1:1 tie -> unresolved, queued; the grader's vote does not break it
        ("a1", "c2", "x2", None, "h1", True, F), ("a1", "c2", "x2", None, "h2", True, U),
        ("a1", "c2", "x2", None, "g", False, F),
        # atoms: one fully, one contradicted -> contradicted
        ("a1", "c3", "x3", "p1", "h1", True, F), ("a1", "c3", "x3", "p2", "h1", True, C),
        # atoms: fully + unsupported -> partial, queued
        ("a1", "c4", "x4", "p1", "h1", True, F), ("a1", "c4", "x4", "p2", "h1", True, U),
        # atoms: all fully -> fully
        ("a1", "c5", "x5", "p1", "h1", True, F), ("a1", "c5", "x5", "p2", "h1", True, F),
        # grader only -> unresolved, queued
        ("a1", "c6", "x6", None, "g", False, F),
        # high-risk domain: queued even when fully supported
        ("a2", "c7", "x7", None, "h1", True, F), ("a2", "c7", "x7", None, "h2", True, F),
        # claim-level judgment (no citation)
        ("a1", "c8", None, None, "h1", True, U), ("a1", "c8", None, None, "h2", True, U),
    ]
    out = adjudication.labels(judged(rows), answers({"a1": "news", "a2": "health"}), Book())
    by = {r["claim_id"]: r for r in out.to_pylist()}
    assert by["c1"]["verdict"] == F and by["c1"]["disagreement"] and not by["c1"]["queued"]
    assert by["c1"]["n_fully_supported"] == 2 and by["c1"]["n_partially_supported"] == 1
    assert by["c1"]["human_votes"] == f"h1={F};h2={F};h3={P}"
    assert by["c2"]["verdict"] == R and by["c2"]["tie"] and by["c2"]["queue_reason"] == "tie"
    assert by["c2"]["n_judgments"] == 2 and by["c2"]["grader_votes"] == f"g={F}"
    assert by["c3"]["verdict"] == C and by["c3"]["n_atoms"] == 2
    assert by["c4"]["verdict"] == P and by["c4"]["queue_reason"] == "partial"
    assert by["c5"]["verdict"] == F and not by["c5"]["queued"]
    assert by["c6"]["verdict"] == R and by["c6"]["basis"] == "grader_only" and by["c6"]["queued"]
    assert by["c7"]["queue_reason"] == "high_risk_domain"
    assert by["c8"]["grain"] == "claim" and by["c8"]["citation_id"] is None
    assert by["c8"]["verdict"] == U
    queue = adjudication.review_queue(out)
    assert sorted(queue.column("claim_id").to_pylist()) == ["c2", "c4", "c6", "c7"]


def test_supported_sampling_is_seeded_and_at_the_rate() -> None:
    rows = [(f"a{i}", f"c{i}", f"x{i}", None, "h1", True, F) for i in range(2000)]
    ans = answers({f"a{i}": "news" for i in range(2000)})
    first = adjudication.labels(judged(rows), ans, Book(rate=0.1, seed=7))
    again = adjudication.labels(judged(rows), ans, Book(rate=0.1, seed=7))
    other = adjudication.labels(judged(rows), ans, Book(rate=0.1, seed=8))
    picked = {r["claim_id"] for r in first.to_pylist() if r["queued"]}
    assert picked == {r["claim_id"] for r in again.to_pylist() if r["queued"]}
    assert picked != {r["claim_id"] for r in other.to_pylist() if r["queued"]}
    assert 150 < len(picked) < 250
    none = adjudication.labels(judged(rows), ans, Book(rate=0.0))
    assert not any(none.column("queued").to_pylist())


def _agree(rows: list[tuple]) -> list[dict]:
    j = judged(rows)
    labels = adjudication.labels(j, answers({"a": "news"}), Book())
    j = j.append_column("grader", pa.array(
        ["human" if h else r[4] for r, h in zip(rows, j.column("is_human").to_pylist(),
                                                 strict=True)]))
    return agreement.agreement(j, labels).to_pylist()


def test_alpha_reproduces_krippendorffs_published_example() -> None:
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", nominal example:
    # 4 coders, 12 units, values 1-5 with missing data; nominal alpha = 0.743.
    data = {
        "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    }
    five = (F, P, U, C, R)
    rows = [("a", f"u{u}", "x", None, coder, True, five[v - 1])
            for coder, values in data.items() for u, v in enumerate(values) if v is not None]
    out = _agree(rows)
    alpha = next(r for r in out if r["statistic"] == "krippendorff_alpha"
                 and r["stratum"] == "overall")
    assert alpha["value"] == pytest.approx(0.743, abs=0.0005)
    # a grader's labels never enter the human reliability or the human gold
    with_grader = _agree(rows + [("a", f"u{u}", "x", None, "judge", False, F)
                                 for u in range(12)])
    alpha2 = next(r for r in with_grader if r["statistic"] == "krippendorff_alpha"
                  and r["stratum"] == "overall")
    assert alpha2["value"] == alpha["value"]
    conf = [r for r in with_grader if r["statistic"] == "confusion"
            and r["stratum"] == "overall"]
    assert {r["annotator_a"] for r in conf} == {"judge"}
    assert all(r["label_a"] == F for r in conf)


def test_pairwise_kappa_by_hand() -> None:
    a = [F, F, F, F, F, U, U, U, U, U]
    b = [F, F, F, F, U, U, U, U, U, F]
    rows = [("a", f"u{i}", "x", None, "A", True, la) for i, la in enumerate(a)]
    rows += [("a", f"u{i}", "x", None, "B", True, lb) for i, lb in enumerate(b)]
    out = _agree(rows)
    kappa = next(r for r in out if r["statistic"] == "cohen_kappa" and r["stratum"] == "overall")
    assert (kappa["annotator_a"], kappa["annotator_b"], kappa["n"]) == ("A", "B", 10)
    assert kappa["value"] == pytest.approx(0.6)  # po 0.8, pe 0.5


def test_single_annotator_alpha_is_undefined_not_zero() -> None:
    rows = [("a", f"u{i}", "x", None, "A", True, F if i % 2 else U) for i in range(6)]
    alpha = next(r for r in _agree(rows) if r["statistic"] == "krippendorff_alpha")
    assert alpha["value"] is None and "two or more" in alpha["note"]


def test_parquet_files_missing_columns_and_no_registry(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from citeaudit import parquet_io
    from citeaudit.demo_corpus.codebooks import write_codebooks

    raw, derived = tmp_path / "raw", tmp_path / "derived"
    write_codebooks(raw / "codebooks")
    (raw / "answers" / "2026-11-01").mkdir(parents=True)
    part = {"observation_date": "2026-11-01"}
    parquet_io.write_partition(pa.table({"claim_id": ["c1"], "answer_id": ["a1"]}),
                               derived, "claims", part)
    parquet_io.write_partition(pa.table({"claim_id": ["c1"], "citation_id": ["x1"],
                                         "answer_id": ["a1"]}), derived, "citations", part)
    folder = raw / "annotations" / "support"
    folder.mkdir(parents=True)
    good = {"claim_id": ["c1", "c1"], "citation_id": ["x1", "x1"],
            "annotator_id": ["anyone", "someone"], "label": ["supports", "partial"],
            "evidence_span": ["", ""], "annotated_at": ["", ""],
            "codebook_version": ["v1", "v2"], "grader": ["human", "human"]}
    pq.write_table(pa.table(good), folder / "batch.parquet")
    broken = {k: v for k, v in good.items() if k != "grader"}
    pq.write_table(pa.table(broken), folder / "broken.parquet")
    book = load_version(raw, "v2")
    accepted, rejected = judgments.judgments(judgments.classify(raw, derived, book), "2026-11-01")
    # no registry: annotators are not checked; both versions exist, both read with v2's map
    assert sorted(accepted.column("verdict").to_pylist()) == ["fully_supported", "unsupported"]
    assert accepted.column("source_line").to_pylist() == [1, 2]
    assert rejected.to_pylist() == [{
        "source": "support_annotations", "source_file": "annotations/support/broken.parquet",
        "source_line": 1, "field": "grader", "reason": "missing_column",
        "detail": "file lacks column(s) grader",
        "raw": "claim_id,citation_id,annotator_id,label,evidence_span,annotated_at,"
               "codebook_version"}]


def test_malformed_registry_is_an_error_not_an_empty_registry(tmp_path: Path) -> None:
    reg = tmp_path / "annotations" / "annotators.csv"
    reg.parent.mkdir(parents=True)
    reg.write_text("annotator_id,kind\nann-01,human\nann-01,grader\n", encoding="utf-8")
    with pytest.raises(ValueError, match="more than once: ann-01"):
        judgments.read_registry(tmp_path)
    reg.write_text("annotator_id,kind\nann-01,robot\n", encoding="utf-8")
    with pytest.raises(ValueError, match="kind must be one of"):
        judgments.read_registry(tmp_path)
    reg.write_text("annotator,kind\nann-01,human\n", encoding="utf-8")
    with pytest.raises(ValueError, match="annotator_id"):
        judgments.read_registry(tmp_path)
