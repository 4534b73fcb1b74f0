"""The rows an engine import leaves in import_rejections/<date>/ reach rejected_inputs: every
row and field arrives, other dates' rows stay out, and a date without any gives none."""

from __future__ import annotations

import json
from pathlib import Path

from citeaudit.ingest import answers


def test_import_rejections_become_rejected_rows(tmp_path: Path) -> None:
    rows = [{"source": "import:perplexity", "file": "responses/perplexity/2026-11-30/a.jsonl",
             "line": 2, "field": "choices[0].message.content",
             "reason": "citation_index_out_of_range", "detail": "marker [9] with 6 sources",
             "raw": '{"id": "x"}'},
            {"source": "import:gemini", "file": "responses/gemini/2026-11-30/b.json", "line": 1,
             "field": "", "reason": "malformed_json", "detail": "Expecting value", "raw": "{"}]
    day = tmp_path / "import_rejections" / "2026-11-30"
    day.mkdir(parents=True)
    (day / "x.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    other = tmp_path / "import_rejections" / "2026-11-29"
    other.mkdir()
    (other / "y.jsonl").write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")
    table = answers.import_rejections(tmp_path, "2026-11-30")
    assert table.schema == answers.REJECTED_SCHEMA
    renamed = [{"source_file": r["file"], "source_line": r["line"],
                **{k: v for k, v in r.items() if k not in ("file", "line")}} for r in rows]
    assert table.to_pylist() == sorted(renamed, key=lambda r: (r["source_file"], r["source_line"]))
    assert answers.import_rejections(tmp_path, "2026-12-01").num_rows == 0
