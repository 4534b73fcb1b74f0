"""Label Studio round trip: the review queue as tasks, an export in Label Studio's documented
JSON shape back into annotations/support rows that the support stage accepts, and a malformed
export rejected whole with its reasons."""

from __future__ import annotations

import csv
import json
import shutil

import pyarrow.compute as pc
import pytest

from citeaudit import cli, codebook
from citeaudit.support import judgments, review

SIGNAL_RANK = {"no_evidence_in_page": 0, "weak_evidence": 1, "mismatch_flagged": 2,
               "evidence_located": 2}


def _raw_copy(demo_run, tmp_path):
    raw = tmp_path / "raw"
    shutil.copytree(demo_run.raw, raw, ignore=shutil.ignore_patterns("warc", "support"))
    (raw / "annotations" / "support").mkdir()
    with open(raw / "annotations" / "annotators.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    with open(raw / "annotations" / "annotators.csv", "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["annotator_id", "kind", "label_studio_user"],
                           lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({**r, "label_studio_user": f"{r['annotator_id']}@example.org"
                        if r["kind"] == "human" else ""})
    return raw


def _export(demo_run, tmp_path):
    date = demo_run.truth["dates"][0]
    out = tmp_path / "tasks.json"
    code = cli.main(["review", "export", "--date", date, "--codebook", "v1", "--out", str(out),
                     "--raw", str(demo_run.raw), "--derived", str(demo_run.derived)])
    assert code == 0
    return date, json.loads(out.read_text(encoding="utf-8")), out


def test_export_orders_by_signal_and_marks_words(demo_run, tmp_path):
    _, tasks, out = _export(demo_run, tmp_path)
    assert tasks
    ranks = [SIGNAL_RANK.get(t["data"]["evidence_verdict"], 3) for t in tasks]
    assert ranks == sorted(ranks)
    marked = [t for t in tasks if "<mark>" in t["data"]["passage_html"]]
    assert marked and all(t["data"]["url"] and t["data"]["capture_time"] for t in marked)
    config = out.with_name("tasks.label_config.xml").read_text(encoding="utf-8")
    book = codebook.load_version(demo_run.raw, "v1")
    for raw_label in book.label_maps[book.support_schema or sorted(book.label_maps)[0]]:
        assert f'<Choice value="{raw_label}"/>' in config


def _annotated(tasks, choice, user="ann-01@example.org"):
    out = []
    for i, t in enumerate(tasks[:5], start=1):
        out.append({"id": i, "data": t["data"], "project": 1,
                    "annotations": [
                        {"id": 100 + i, "completed_by": {"id": 7, "email": user},
                         "result": [{"id": f"r{i}", "from_name": "support", "to_name": "claim",
                                     "type": "choices", "value": {"choices": [choice]}}],
                         "was_cancelled": False, "ground_truth": False,
                         "created_at": "2026-11-05T10:00:00.000000Z", "task": i},
                        {"id": 200 + i, "completed_by": 9, "result": [],
                         "was_cancelled": True, "created_at": "2026-11-05T10:01:00Z"}],
                    "predictions": []})
    return out


def test_import_writes_rows_the_support_stage_accepts(demo_run, tmp_path):
    date, tasks, _ = _export(demo_run, tmp_path)
    raw = _raw_copy(demo_run, tmp_path)
    book = codebook.load_version(raw, "v1")
    choice = next(iter(book.label_maps[book.support_schema or sorted(book.label_maps)[0]]))
    export = tmp_path / "export.json"
    export.write_text(json.dumps(_annotated(tasks, choice)), encoding="utf-8")
    assert cli.main(["review", "import", str(export), "--raw", str(raw)]) == 0
    files = sorted((raw / "annotations" / "support").glob("label-studio-*.csv"))
    assert len(files) == 1
    with open(files[0], encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 5 and {r["annotator_id"] for r in rows} == {"ann-01"}
    accepted, rejected = judgments.judgments(judgments.classify(raw, demo_run.derived, book),
                                             date)
    assert rejected.num_rows == 0, rejected.to_pylist()[:3]
    assert pc.sum(pc.equal(accepted.column("annotator_id"), "ann-01")).as_py() == 5
    assert cli.main(["review", "import", str(export), "--raw", str(raw)]) == 0
    assert files[0].read_bytes() == sorted(
        (raw / "annotations" / "support").glob("label-studio-*.csv"))[0].read_bytes()


def test_malformed_export_is_rejected_whole(demo_run, tmp_path, capsys):
    _, tasks, _ = _export(demo_run, tmp_path)
    raw = _raw_copy(demo_run, tmp_path)
    bad = _annotated(tasks, "definitely-not-a-label", user="stranger@example.org")
    bad.append({"id": 99, "annotations": []})
    export = tmp_path / "bad.json"
    export.write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(review.ExportError) as err:
        review.import_export(export, raw)
    reasons = err.value.reasons
    assert any("not in the annotator registry" in r for r in reasons)
    assert any("is not a label of the codebook" in r for r in reasons)
    assert any(r.startswith("task[5].data") for r in reasons)
    assert cli.main(["review", "import", str(export), "--raw", str(raw)]) == 2
    assert "rejected, nothing written" in capsys.readouterr().out
    assert not list((raw / "annotations" / "support").glob("*.csv"))
