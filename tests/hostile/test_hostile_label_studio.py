"""Hostile Label Studio exports: wrong types anywhere, deep or invalid JSON, a codebook version
pointing outside the raw folder, cells a spreadsheet would evaluate. Each is refused with its
reasons (nothing written); a good export writes a CSV no spreadsheet evaluates."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import yaml

from citeaudit import cli
from citeaudit.demo_corpus.codebooks import codebook as demo_codebook
from citeaudit.support import review


@pytest.fixture
def raw(tmp_path: Path) -> Path:
    raw = tmp_path / "sub" / "raw"
    (raw / "codebooks").mkdir(parents=True)
    (raw / "annotations").mkdir()
    (raw / "codebooks" / "v1.yaml").write_text(yaml.safe_dump(demo_codebook("v1")))
    (raw / "annotations" / "annotators.csv").write_text(
        "annotator_id,kind,label_studio_user\nann-01,human,ann@example.org\n")
    # a codebook outside the raw folder that a crafted version would reach
    (tmp_path / "sub" / "evil.yaml").write_text(yaml.safe_dump({**demo_codebook("v1"),
                                                        "version": "evil"}))
    return raw


def _choice(raw: Path) -> str:
    from citeaudit import codebook

    book = codebook.load_version(raw, "v1")
    return next(iter(book.label_maps[book.support_schema or sorted(book.label_maps)[0]]))


def _task(choice: str, **data) -> dict:
    return {"id": 1, "data": {"claim_id": "a:s000", "codebook_version": "v1", **data},
            "annotations": [{"completed_by": {"email": "ann@example.org"},
                             "result": [{"from_name": "support", "type": "choices",
                                         "value": {"choices": [choice]}}],
                             "created_at": "2026-11-05T10:00:00Z"}]}


def _import(raw: Path, tmp_path: Path, doc: object | bytes) -> tuple[int, list[str]]:
    export = tmp_path / "export.json"
    export.write_bytes(doc if isinstance(doc, bytes) else json.dumps(doc).encode())
    try:
        review.import_export(export, raw)
    except review.ExportError as exc:
        assert not (raw / "annotations" / "support").exists()  # nothing written
        return 2, exc.reasons
    return 0, []


def test_good_export_writes_a_csv_no_spreadsheet_evaluates(raw: Path, tmp_path: Path) -> None:
    assert _import(raw, tmp_path, [_task(_choice(raw))])[0] == 0
    [out] = (raw / "annotations" / "support").glob("label-studio-*.csv")
    rows = list(csv.reader(out.open(encoding="utf-8")))
    assert len(rows) == 2
    assert not any(cell.startswith(review.FORMULA_START) for row in rows for cell in row)


@pytest.mark.parametrize("mutate, reason", [
    (lambda t: t["data"].update(codebook_version="../../evil"), "not a codebook of the raw"),
    (lambda t: t["data"].update(claim_id="=HYPERLINK(\"http://x\")"), "spreadsheet formula"),
    (lambda t: t["data"].update(citation_id="@SUM(1+1)"), "spreadsheet formula"),
    (lambda t: t["annotations"][0].update(created_at="=1+1"), "not an ISO 8601 time"),
    (lambda t: t["annotations"][0].update(result=5), "expected one 'support' choice"),
    (lambda t: t["annotations"][0]["result"][0].update(value=[1]), "expected one"),
    (lambda t: t["annotations"][0]["result"][0]["value"].update(choices=[{"a": 1}]),
     "not a label"),
    (lambda t: t["annotations"][0]["result"][0]["value"].update(choices="xy"), "expected one"),
])
def test_hostile_task_is_refused_with_its_reason(raw: Path, tmp_path: Path, mutate,
                                                 reason: str) -> None:
    task = _task(_choice(raw))
    mutate(task)
    code, reasons = _import(raw, tmp_path, [task])
    assert code == 2 and any(reason in r for r in reasons), reasons


@pytest.mark.parametrize("body, reason", [
    (b"[" * 100_000 + b"]" * 100_000, "too_deep"),
    (b'[{"data": NaN}]', "invalid_number"),
    (b'[{"data": "\xff"}]', "invalid_utf8"),
])
def test_unreadable_export_is_refused(raw: Path, tmp_path: Path, body: bytes,
                                      reason: str) -> None:
    code, reasons = _import(raw, tmp_path, body)
    assert code == 2 and reason in reasons[0]


def test_cli_names_the_file_and_reasons(raw: Path, tmp_path: Path, capsys) -> None:
    export = tmp_path / "export.json"
    export.write_text(json.dumps([_task("x", codebook_version="../../evil")]))
    assert cli.main(["review", "import", str(export), "--raw", str(raw)]) == 2
    out = capsys.readouterr().out
    assert str(export) in out and "not a codebook of the raw folder" in out
