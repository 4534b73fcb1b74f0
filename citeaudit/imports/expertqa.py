"""Import ExpertQA (Malaviya et al. 2024) expert-judged answers (``*.jsonl``).

Each line is one expert question with ``annotator_id``, ``metadata.field`` (the expert's field:
our stratum ``domain``) and ``answers`` keyed by system (bing_chat, gpt4, rr_gs_gpt4, ...), each
with ``answer_string`` and ``claims`` (``claim_string``, ``evidence`` — a list of
``"[n] url\\n\\npassage"`` strings — and the expert's ``support`` label for the claim against
all its evidence together).

Mapping: one answer per (question, system) (answer_id ``expertqa-<line>-<system>``), one claim
per claim string (span located in the answer with whitespace-tolerant matching), one citation
per evidence item (url, passage as ``quote``), and one claim-level support annotation row per
claim (``citation_id`` empty, schema ``expertqa``) by the answer's annotator. A claim whose
``support`` is missing in the source is written with an empty label, so ingestion rejects it
visibly (missing_field) rather than inventing a label. ``observed_at`` is the ``--date`` given
(default 2023-06-01; the source has none); inclusion probability 1.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from citeaudit.imports import writer
from citeaudit.imports.codebook import VERSION
from citeaudit.untrusted import (
    JsonRejected,
    decode_utf8,
    encodable,
    file_part,
    fragment,
    load_json,
    need,
    rejection,
    write_rejections,
)

SCHEMA = "expertqa"
DEFAULT_DATE = "2023-06-01"
SOURCE = "import:expertqa"
_EVIDENCE = re.compile(r"^\s*\[(\d+)\]\s*(\S+)\s*(.*)$", re.S)


def locate(text: str, claim: str, start: int = 0) -> tuple[int, int] | None:
    """The span of ``claim`` in ``text``, whitespace differences allowed; None if absent."""
    tokens = claim.split()
    if not tokens:
        return None
    pattern = re.compile(r"\s*".join(re.escape(t) for t in tokens))
    m = pattern.search(text, start) or pattern.search(text)
    return m.span() if m else None


def _citation(claim_id: str, j: int, evidence: str) -> dict:
    m = _EVIDENCE.match(evidence)
    cit = {"citation_id": f"{claim_id}:e{j:02d}", "source_type": "web"}
    if m:
        cit.update(tag=None, url=m.group(2), source_id=m.group(2))
        if m.group(3).strip():
            cit["quote"] = m.group(3).strip()
    else:
        cit["quote"] = evidence
    return {k: v for k, v in cit.items() if v is not None}


def check(rec: Any) -> None:
    """Refuse a line whose fields are not of the schema (:class:`JsonRejected` naming the
    field), before anything is built from it."""
    encodable(rec)
    if not isinstance(rec, dict):
        raise JsonRejected("not_an_object", f"a line is a {type(rec).__name__}")
    need(rec, "question", str, "question")
    need(rec, "annotator_id", str, "annotator_id", required=False)
    meta = need(rec, "metadata", dict, "metadata", required=False) or {}
    need(meta, "field", str, "metadata.field", required=False)
    answers = need(rec, "answers", dict, "answers")
    if not answers:
        raise JsonRejected("missing_field", "answers holds no system's answer", "answers")
    for system, ans in answers.items():
        where = f"answers.{system}"
        if not isinstance(ans, dict):
            raise JsonRejected("wrong_type", "expected an object", where)
        need(ans, "answer_string", str, where + ".answer_string")
        need(ans, "annotator_id", str, where + ".annotator_id", required=False)
        for k, c in enumerate(need(ans, "claims", list, where + ".claims")):
            at = f"{where}.claims[{k}]"
            if not isinstance(c, dict):
                raise JsonRejected("wrong_type", "expected an object", at)
            need(c, "claim_string", str, at + ".claim_string")
            for key in ("support", "worthiness", "reason_missing_support"):
                need(c, key, str, f"{at}.{key}", required=False)
            evidence = need(c, "evidence", list, at + ".evidence", required=False) or []
            for j, ev in enumerate(evidence):
                if not isinstance(ev, str):
                    raise JsonRejected("wrong_type", "expected a string", f"{at}.evidence[{j}]")


def _answers(i: int, rec: dict, date: str) -> tuple[list[tuple[str, dict]], list[dict]]:
    """The answers (system, answer) and annotation rows of line ``i``; :class:`JsonRejected`
    when a claim is not found in its answer."""
    field = (rec.get("metadata") or {}).get("field") or "unknown"
    out: list[tuple[str, dict]] = []
    rows: list[dict] = []
    for system, ans in sorted(rec["answers"].items()):
        answer_id = f"expertqa-{i:04d}-{system}"
        text = ans["answer_string"]
        annotator = ans.get("annotator_id") or rec.get("annotator_id") or ""
        claims, cursor = [], 0
        for k, c in enumerate(ans["claims"]):
            span = locate(text, c["claim_string"], cursor)
            if span is None:
                raise JsonRejected("span_text_mismatch", f"claim {k} not found in the answer",
                                   f"answers.{system}.claims[{k}].claim_string")
            cursor = span[1]
            claim_id = f"{answer_id}:c{k:02d}"
            claims.append({
                "claim_id": claim_id, "span": list(span), "text": c["claim_string"],
                "verification_worthy": {"Yes": True, "No": False}.get(c.get("worthiness")),
                "citations": [_citation(claim_id, j, ev)
                              for j, ev in enumerate(c.get("evidence") or [])],
            })
            rows.append({
                "claim_id": claim_id, "citation_id": "", "annotator_id": annotator,
                "label": c.get("support") or "",
                "evidence_span": c.get("reason_missing_support") or "",
                "codebook_version": VERSION, "grader": "human", "schema": SCHEMA,
            })
        out.append((system, {
            "answer_id": answer_id,
            "query_id": "expertqa-q-" + writer.short_id(rec["question"]),
            "query_text": rec["question"],
            "engine": system,
            "observed_at": f"{date}T00:00:00Z",
            "answer_text": text,
            "strata": {"domain": field, "risk_band": "unknown", "inclusion_prob": 1.0},
            "claims": claims,
        }))
    return out, rows


def convert(lines: list[Any], date: str, file: str = ""
            ) -> tuple[dict[str, list[dict]], list[dict], list[dict]]:
    """(answers per system, annotation rows, rejections) for the lines of one file; a line that
    is a rejection (or several, if it fails to read) leaves the others imported. ``lines``
    holds the parsed objects, or the :class:`JsonRejected` of a line that did not parse."""
    by_system: dict[str, list[dict]] = {}
    rows: list[dict] = []
    rejected: list[dict] = []
    for i, rec in enumerate(lines, start=1):
        if isinstance(rec, JsonRejected):
            rejected.append(rejection(SOURCE, file, i, rec))
            continue
        try:
            check(rec)
            answers, ann = _answers(i, rec, date)
        except JsonRejected as exc:
            rejected.append(rejection(SOURCE, file, i, exc, fragment(rec)))
            continue
        except (KeyError, TypeError, ValueError, AttributeError, IndexError,
                RecursionError) as exc:
            rejected.append(rejection(SOURCE, file, i, exc, fragment(rec)))
            continue
        for system, answer in answers:
            by_system.setdefault(system, []).append(answer)
        rows.extend(ann)
    return by_system, rows, rejected


def _parse(line: bytes) -> Any:
    try:
        return load_json(decode_utf8(line))
    except JsonRejected as exc:
        return exc


def import_file(path: Path, out: Path, date: str = DEFAULT_DATE) -> dict:
    """Import one ExpertQA JSONL file into ``out``; returns counts of what was written. A line
    that does not read is a rejection row (file, line, field, reason); the rest are imported.
    ``line`` counts the file's non-blank lines, as the source numbers its questions."""
    lines = [_parse(b) for b in Path(path).read_bytes().split(b"\n") if b.strip()]
    by_system, rows, rejected = convert(lines, date, Path(path).name)
    stem = Path(path).stem
    for system, answers in sorted(by_system.items()):
        writer.write_answers(out, date, f"expertqa-{stem}-{file_part(system)}", answers)
    writer.write_annotations(out, f"expertqa-{stem}", rows)
    writer.merge_registry(out, {r["annotator_id"]: "human" for r in rows if r["annotator_id"]})
    writer.write_codebook(out)
    write_rejections(out, date, f"expertqa-{stem}", rejected)
    return {"dataset": "expertqa", "answers": sum(len(a) for a in by_system.values()),
            "claims": len(rows), "annotation_rows": len(rows), "rejected_lines": len(rejected),
            "date": date}
