"""Import Liu, Zhang & Liang (2023) human evaluations (``intrinsic_halls.json`` schema).

Each record is one engine's answer to one query: ``response`` text, ``citations`` (text such as
``[1]``, character offsets, ``link_target``), ``statements_to_citation_texts`` and, under
``annotation.statement_to_annotation``, per statement ``statement_is_verification_worthy`` and
per citation ``citation_supports`` (the label) and ``evidence`` (a quoted passage).

Mapping onto the raw layout: one answer per record (engine = ``system_name``, domain = the
query ``split``; the source holds no observation time, so ``observed_at`` is the ``--date``
given, default 2023-03-01, the month the paper's data was collected), one claim per statement
(span found in the response), one citation per citation marker inside the statement's span,
one support annotation row per citation judgment (schema ``liu2023``) and one claim-level row
(empty citation_id, schema ``liu2023_statement``) per statement judged as a whole
(``statement_supported``: do its citations together fully support it; statements without
citations have no such judgment and get no row). The source does not
identify annotators: every row names the single pseudo-annotator ``liu2023-annotator``.
Inclusion probability is 1 (the file is a fixed, and biased, subset: no weights can undo that).
"""

from __future__ import annotations

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

SCHEMA = "liu2023"
STATEMENT_SCHEMA = "liu2023_statement"
ANNOTATOR = "liu2023-annotator"
DEFAULT_DATE = "2023-03-01"
SOURCE = "import:liu"


def _claims(rec: dict, answer_id: str) -> tuple[list[dict], list[dict]]:
    """The claims of one record and the annotation rows of their citations."""
    text = rec["response"]
    judged = rec["annotation"]["statement_to_annotation"]
    statements = list(rec["statements_to_citation_texts"].items())
    located = []
    cursor = 0
    for statement, cited in statements:
        start = text.find(statement, cursor)
        if start < 0:
            start = text.find(statement)
        if start < 0 or not statement:
            raise JsonRejected("span_text_mismatch", f"statement not found in response: "
                               f"{statement[:80]!r}", "statements_to_citation_texts")
        located.append((start, start + len(statement), statement, cited))
        cursor = start + len(statement)
    claims, rows = [], []
    for k, (start, end, statement, cited) in enumerate(located):
        claim_id = f"{answer_id}:s{k:02d}"
        markers = [c for c in rec["citations"]
                   if start <= c["start_index"] < end and c["text"] in cited]
        citations, by_text = [], {}
        for j, c in enumerate(sorted(markers, key=lambda c: c["start_index"])):
            cid = f"{claim_id}:c{j:02d}"
            by_text.setdefault(c["text"], cid)
            citations.append({"citation_id": cid, "url": c["link_target"],
                              "source_id": c["link_target"], "source_type": "web"})
        note = judged.get(statement) or {}
        claims.append({"claim_id": claim_id, "span": [start, end], "text": statement,
                       "verification_worthy": note.get("statement_is_verification_worthy"),
                       "citations": citations})
        if note.get("statement_supported") is not None:
            rows.append({
                "claim_id": claim_id, "citation_id": "", "annotator_id": ANNOTATOR,
                "label": note["statement_supported"], "evidence_span": "",
                "codebook_version": VERSION, "grader": "human", "schema": STATEMENT_SCHEMA,
            })
        for ann in note.get("citation_annotations") or []:
            rows.append({
                "claim_id": claim_id,
                # a judged marker the statement does not carry stays visible as an orphan id
                "citation_id": by_text.get(ann["citation_text"],
                                           f"{claim_id}:{ann['citation_text']}"),
                "annotator_id": ANNOTATOR,
                "label": ann.get("citation_supports") or "",
                "evidence_span": ann.get("evidence") or "",
                "codebook_version": VERSION,
                "grader": "human",
                "schema": SCHEMA,
            })
    return claims, rows


def check(rec: Any) -> None:
    """Refuse a record whose fields are not of the schema (:class:`JsonRejected` naming the
    field), before anything is built from it."""
    encodable(rec)
    if not isinstance(rec, dict):
        raise JsonRejected("not_an_object", f"a record is a {type(rec).__name__}")
    need(rec, "id", (str, int), "id")
    for key in ("system_name", "query", "response"):
        need(rec, key, str, key)
    need(rec, "split", str, "split", required=False)
    for i, c in enumerate(need(rec, "citations", list, "citations")):
        where = f"citations[{i}]"
        if not isinstance(c, dict):
            raise JsonRejected("wrong_type", "expected an object", where)
        need(c, "text", str, where + ".text")
        need(c, "start_index", int, where + ".start_index")
        need(c, "link_target", str, where + ".link_target")
    statements = need(rec, "statements_to_citation_texts", dict, "statements_to_citation_texts")
    for statement, cited in statements.items():
        if not (isinstance(cited, list) and all(isinstance(t, str) for t in cited)):
            raise JsonRejected("wrong_type", "expected a list of strings",
                               f"statements_to_citation_texts[{statement[:60]!r}]")
    judged = need(need(rec, "annotation", dict, "annotation"), "statement_to_annotation", dict,
                  "annotation.statement_to_annotation")
    for statement, note in judged.items():
        where = f"annotation.statement_to_annotation[{statement[:60]!r}]"
        if not isinstance(note, dict):
            raise JsonRejected("wrong_type", "expected an object", where)
        need(note, "statement_is_verification_worthy", bool,
             where + ".statement_is_verification_worthy", required=False)
        need(note, "statement_supported", str, where + ".statement_supported", required=False)
        for j, ann in enumerate(need(note, "citation_annotations", list,
                                     where + ".citation_annotations", required=False) or []):
            at = f"{where}.citation_annotations[{j}]"
            if not isinstance(ann, dict):
                raise JsonRejected("wrong_type", "expected an object", at)
            need(ann, "citation_text", str, at + ".citation_text")
            need(ann, "citation_supports", str, at + ".citation_supports", required=False)
            need(ann, "evidence", str, at + ".evidence", required=False)


def convert(records: list[Any], date: str, file: str = ""
            ) -> tuple[dict[str, list[dict]], list[dict], list[dict]]:
    """(answers per engine, annotation rows, rejections) for the records of one file. A record
    that does not read is a rejection (line = its 1-based position in the list) and the others
    are converted."""
    by_engine: dict[str, list[dict]] = {}
    rows: list[dict] = []
    rejected: list[dict] = []
    for n, rec in enumerate(records, start=1):
        try:
            check(rec)
            answer_id = f"liu-{rec['id']}"
            claims, ann = _claims(rec, answer_id)
        except JsonRejected as exc:
            rejected.append(rejection(SOURCE, file, n, exc, fragment(rec)))
            continue
        except (KeyError, TypeError, ValueError, AttributeError, IndexError,
                RecursionError) as exc:
            rejected.append(rejection(SOURCE, file, n, exc, fragment(rec)))
            continue
        by_engine.setdefault(rec["system_name"], []).append({
            "answer_id": answer_id,
            "query_id": "liu-q-" + writer.short_id(rec["query"]),
            "query_text": rec["query"],
            "engine": rec["system_name"],
            "observed_at": f"{date}T00:00:00Z",
            "answer_text": rec["response"],
            "strata": {"domain": rec.get("split") or "unknown", "risk_band": "unknown",
                       "inclusion_prob": 1.0},
            "claims": claims,
        })
        rows.extend(ann)
    return by_engine, rows, rejected


BOTH_WAYS = "Citation Completely Supports but Also Refutes Statement"


def _both_ways(rec: Any) -> bool | None:
    """Whether a record holds a "supports but also refutes" citation; None for a record that
    does not have the dataset's shape (the import rejects it: it is not part of the numbers)."""
    try:
        notes = rec["annotation"]["statement_to_annotation"].values()
        return any(ann.get("citation_supports") == BOTH_WAYS
                   for note in notes for ann in note.get("citation_annotations") or [])
    except (KeyError, TypeError, AttributeError):
        return None


def caveats(records: list[Any], date: str) -> list[str]:
    """What a reader of these records' numbers must know, measured on the records the import
    reads: whether every answer was chosen for holding a "supports but also refutes" citation
    (the bundled subset is), the engines and their counts, and that the date is not the
    source's."""
    marks = [(rec, mark) for rec in records if (mark := _both_ways(rec)) is not None
             and isinstance(rec.get("system_name"), str)]
    records = [rec for rec, _ in marks]
    both = sum(1 for _, mark in marks if mark)
    out = []
    if records and both == len(records):
        out.append(
            f"A selected subset, not a sample: every one of the {len(records)} answers has at "
            "least one citation judged 'Completely Supports but Also Refutes'. Its rates "
            "(citation precision and recall above all) are far below the paper's headline "
            "numbers and say nothing about the engines' traffic; use it to check parsing "
            "and metric code, not to compare engines.")
    elif both:
        out.append(f"{both} of {len(records)} answers hold a 'supports but also refutes' "
                   "citation; how the records were chosen is not recorded in the file.")
    engines: dict[str, int] = {}
    for rec in records:
        engines[rec["system_name"]] = engines.get(rec["system_name"], 0) + 1
    out.append("Engines (answers): " + ", ".join(f"{e} ({n})" for e, n in sorted(
        engines.items())) + "; inclusion probability 1 for every answer (no design weights).")
    out.append(f"The source holds no observation time: the answers are dated {date} (the "
               "import's --date).")
    return out


def import_file(path: Path, out: Path, date: str = DEFAULT_DATE) -> dict:
    """Import one Liu et al. JSON file into ``out``; returns counts of what was written. A file
    that does not read (not UTF-8, not JSON, not a list) is one rejection row; a record that
    does not is one rejection row and the rest are imported."""
    stem = Path(path).stem
    try:
        records = load_json(decode_utf8(Path(path).read_bytes()))
        if not isinstance(records, list):
            raise JsonRejected("wrong_type", "expected a JSON list of records")
    except JsonRejected as exc:
        records = []
        by_engine, rows, rejected = {}, [], [rejection(SOURCE, Path(path).name, 1, exc)]
    else:
        by_engine, rows, rejected = convert(records, date, Path(path).name)
    for engine, answers in sorted(by_engine.items()):
        writer.write_answers(out, date, f"liu-{stem}-{file_part(engine)}", answers)
    writer.write_annotations(out, f"liu-{stem}", rows)
    writer.merge_registry(out, {ANNOTATOR: "human"})
    writer.write_codebook(out)
    write_rejections(out, date, f"liu-{stem}", rejected)
    notes = caveats(records, date)
    writer.write_caveats(out, "liu2023", str(path), [date], notes)
    return {"dataset": "liu", "answers": sum(len(a) for a in by_engine.values()),
            "claims": sum(len(a["claims"]) for v in by_engine.values() for a in v),
            "annotation_rows": len(rows), "rejected_records": len(rejected), "date": date,
            "caveats": notes}
