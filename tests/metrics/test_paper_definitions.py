"""Papers' own numbers on their own data, through `citeaudit import` and `citeaudit run`: the
metrics named after Liu, Zhang & Liang (2023) and ExpertQA (Malaviya et al. 2024) equal the
papers' definitions, computed here from the raw files (not from our tables), per engine and
pooled over all engines."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest

FULL = "Citation Completely Supports Statement"
PARTIAL = "Citation Partially Supports Statement"
LIU_DATE = "2023-03-01"


@pytest.fixture(scope="module")
def liu_file(corpora: Path) -> Path:
    path = corpora / "annotations" / "liu-verifiability" / "intrinsic_halls.json"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    return path


def metrics_rows(run, date: str) -> list[dict]:
    """The codebook-v1 metrics rows of ``date`` of the session's shared run of both imported
    datasets (`citeaudit import` then `citeaudit run` offline: tests/conftest.py); each
    dataset has its own dates, and metrics are computed per date."""
    out = run.derived / "metrics" / f"observation_date={date}" / "codebook=v1" / "data.parquet"
    return pq.read_table(out).to_pylist()


@pytest.fixture(scope="module")
def liu_rows(liu_file: Path, imported_run) -> list[dict]:
    return metrics_rows(imported_run, LIU_DATE)


def paper_counts(path: Path) -> dict[str, dict[str, int]]:
    """Per engine (and 'all'): the counts behind Liu et al.'s citation recall and precision.

    Recall: verification-worthy statements whose statement_supported is "Yes", over every
    verification-worthy statement ("No", "Citations Contradict Each Other" and a statement
    with no citation are all not supported). Precision: (T_fs + T_ps) / N over the judged
    citations, a partial citation counting only when its statement is "Yes" and none of the
    statement's citations completely supports it; every other label counts 0.
    """
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for rec in json.loads(path.read_text(encoding="utf-8")):
        for engine in (rec["system_name"], "all"):
            c = counts[engine]
            for note in rec["annotation"]["statement_to_annotation"].values():
                if not note["statement_is_verification_worthy"]:
                    continue
                c["worthy"] += 1
                c["supported"] += note.get("statement_supported") == "Yes"
                c["contradict_each_other"] += (note.get("statement_supported")
                                               == "Citations Contradict Each Other")
                labels = [a["citation_supports"] for a in note.get("citation_annotations") or []]
                union = note.get("statement_supported") == "Yes" and FULL not in labels
                c["citations"] += len(labels)
                c["t_fs"] += labels.count(FULL)
                c["t_ps"] += labels.count(PARTIAL) if union else 0
                c["inaccessible_or_unclear"] += sum(
                    lab in ("Citation Inaccessible", "Statement is Unclear, Can't Make Judgment")
                    for lab in labels)
    return counts


def overall_or_engine(rows: list[dict], metric: str, engine: str) -> dict:
    level = "overall" if engine == "all" else "engine"
    hits = [r for r in rows if r["metric"] == metric and r["margin"] == level
            and r["engine"] == engine]
    assert len(hits) == 1, (metric, engine, hits)
    return hits[0]


def test_liu_metrics_compute_the_papers_definitions(liu_file: Path, liu_rows: list[dict]
                                                    ) -> None:
    counts = paper_counts(liu_file)
    assert set(counts) == {"bing_chat", "neeva", "perplexity", "you", "all"}
    table = []
    for engine, c in sorted(counts.items()):
        recall = c["supported"] / c["worthy"]
        precision = (c["t_fs"] + c["t_ps"]) / c["citations"]
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        rec = overall_or_engine(liu_rows, "liu_citation_recall", engine)
        prec = overall_or_engine(liu_rows, "liu_citation_precision", engine)
        f1_row = overall_or_engine(liu_rows, "liu_citation_f1", engine)
        assert (rec["numerator"], rec["denominator"], rec["unresolved"]) == (
            c["supported"], c["worthy"], 0), engine
        assert (prec["numerator"], prec["denominator"], prec["unresolved"]) == (
            c["t_fs"] + c["t_ps"], c["citations"], 0), engine
        assert rec["estimate"] == pytest.approx(recall, abs=1e-12)
        assert prec["estimate"] == pytest.approx(precision, abs=1e-12)
        assert f1_row["estimate"] == pytest.approx(f1, abs=1e-12)
        for r in (rec, prec, f1_row):
            assert (r["verdict"], r["reason"]) == ("estimated", None), r
            assert r["ci_low"] <= r["estimate"] <= r["ci_high"], r

        # the fail-closed variants beside them set the unresolved aside, never count them
        fc_rec = overall_or_engine(liu_rows, "citation_recall", engine)
        fc_prec = overall_or_engine(liu_rows, "citation_precision", engine)
        assert (fc_rec["numerator"], fc_rec["denominator"], fc_rec["unresolved"]) == (
            c["supported"], c["worthy"] - c["contradict_each_other"],
            c["contradict_each_other"]), engine
        assert fc_prec["numerator"] == c["t_fs"] + c["t_ps"], engine
        assert fc_prec["unresolved"] >= c["inaccessible_or_unclear"], engine
        assert fc_prec["denominator"] + fc_prec["unresolved"] == c["citations"], engine
        table.append(f"{engine:10s} recall {100 * recall:5.1f}% ({c['supported']}/"
                     f"{c['worthy']}) | fail-closed {100 * fc_rec['estimate']:5.1f}% · "
                     f"precision {100 * precision:5.1f}% ({c['t_fs'] + c['t_ps']}/"
                     f"{c['citations']}) | fail-closed {100 * fc_prec['estimate']:5.1f}% · "
                     f"F1 {100 * f1:5.1f}%")
    print("\n" + "\n".join(table))
    # the numbers the issue measured: precision 47.9% overall, 51.6% for perplexity
    assert round(100 * overall_or_engine(liu_rows, "liu_citation_precision", "all")
                 ["estimate"], 1) == 47.9
    assert round(100 * overall_or_engine(liu_rows, "liu_citation_precision", "perplexity")
                 ["estimate"], 1) == 51.6
    assert round(100 * overall_or_engine(liu_rows, "liu_citation_recall", "all")
                 ["estimate"], 1) == 44.0


def test_expertqa_attribution_is_the_share_of_complete_claims(
        corpora: Path, imported_run) -> None:
    """ExpertQA's attribution figure: claims labelled Complete among claims labelled
    Complete, Partial, Incomplete or Missing, per system; N/A is counted beside."""
    path = corpora / "annotations" / "expertqa" / "domain_val.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for line in path.read_text(encoding="utf-8").splitlines():
        for system, answer in json.loads(line)["answers"].items():
            for claim in answer["claims"]:
                for key in (system, "all"):
                    counts[key][claim.get("support")] += 1
    rows = metrics_rows(imported_run, "2023-06-01")
    for system, c in counts.items():
        complete = c["Complete"]
        labelled = complete + c["Partial"] + c["Incomplete"] + c["Missing"]
        r = overall_or_engine(rows, "expertqa_attribution", system)
        assert (r["numerator"], r["denominator"], r["unresolved"]) == (
            complete, labelled, c["N/A"]), system
        assert r["estimate"] == pytest.approx(complete / labelled, abs=1e-12)
        assert r["ci_low"] <= r["estimate"] <= r["ci_high"]
