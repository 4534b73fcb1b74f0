"""The review round trip with Label Studio: queue → tasks JSON → people → export → CSV rows.

``export_tasks`` turns one ``review_queue`` partition (already ordered by the evidence signal)
into Label Studio tasks: each task's ``data`` has the claim, the best passage (plain and as HTML
with the atom's matched words in ``<mark>``), URL, capture time, the evidence signal and the ids
needed to come back; a labeling config (``Choices`` over the codebook's raw labels of its
support schema) is written beside it. ``import_export`` reads a Label Studio JSON export (a list
of tasks with ``annotations[].result[]`` of type ``choices``, ``completed_by`` a user id or an
object with ``email``), maps each Label Studio user to an annotator id through the registry
(``annotations/annotators.csv``: its optional ``label_studio_user`` column, else an id that is
itself registered) and writes ``annotations/support/label-studio-<digest>.csv`` in the
annotation contract's columns. A malformed export is rejected whole with every reason (task
index and field), so nothing is half-imported; cancelled annotations are counted, not written.
"""

from __future__ import annotations

import csv
import hashlib
import html
import io
import re
from pathlib import Path
from typing import Any

import pyarrow.csv as pacsv

from citeaudit import parquet_io, storage
from citeaudit.codebook import Codebook
from citeaudit.untrusted import JsonRejected, decode_utf8, load_json

FROM_NAME = "support"
TO_NAME = "claim"
COLUMNS = ("claim_id", "citation_id", "annotator_id", "label", "evidence_span",
           "annotated_at", "codebook_version", "grader")
_MARK = re.compile(r"\[\[(.+?)\]\]")


class ExportError(ValueError):
    """A Label Studio export that cannot be imported; ``reasons`` lists every problem."""

    def __init__(self, path: Path, reasons: list[str]):
        super().__init__(f"{path}: {len(reasons)} problem(s): " + "; ".join(reasons[:20]))
        self.reasons = reasons


def _choices(book: Codebook) -> list[str]:
    schema = book.support_schema or (sorted(book.label_maps)[0] if book.label_maps else "")
    return list(book.label_maps.get(schema, {}))


def label_config(book: Codebook) -> str:
    """The Label Studio labeling config (XML) for the tasks: the codebook's labels as choices."""
    choices = "\n".join(f'    <Choice value="{html.escape(c)}"/>' for c in _choices(book))
    return (
        "<View>\n"
        '  <Header value="Claim"/>\n  <Text name="claim" value="$claim"/>\n'
        '  <Header value="Archived passage (claim words marked)"/>\n'
        '  <HyperText name="passage" value="$passage_html"/>\n'
        '  <Text name="source" value="$source"/>\n'
        f'  <Choices name="{FROM_NAME}" toName="{TO_NAME}" choice="single" required="true">\n'
        f"{choices}\n  </Choices>\n</View>\n")


def _passage_html(marked: str | None) -> str:
    if not marked:
        return "<p><em>no passage located in the archived page</em></p>"
    escaped = html.escape(marked, quote=False)
    return "<p>" + _MARK.sub(r"<mark>\1</mark>", escaped).replace("\n", "<br/>") + "</p>"


def export_tasks(derived: Path, date: str, book: Codebook, claims_text: dict[str, str]
                 ) -> list[dict]:
    """Label Studio tasks for the review queue of ``date`` × ``book.version``, in queue order."""
    part = {"observation_date": date, "codebook": book.version}
    queue = parquet_io.read_partition(derived, "review_queue", part)
    tasks = []
    for r in queue.to_pylist():
        when = r.get("evidence_capture_time")
        tasks.append({"data": {
            "claim_id": r["claim_id"], "citation_id": r["citation_id"] or "",
            "claim": claims_text.get(r["claim_id"], ""),
            "passage": r.get("evidence_passage") or "",
            "passage_html": _passage_html(r.get("evidence_passage_marked")),
            "url": r.get("evidence_url") or "",
            "capture_time": when.isoformat() if when is not None else "",
            "source": f"{r.get('evidence_url') or 'no URL'} — captured "
                      f"{when.isoformat() if when is not None else 'never (page unavailable)'}",
            "evidence_verdict": r.get("evidence_verdict") or "",
            "queue_reason": r["reason"], "engine": r["engine"], "domain": r["domain"],
            "codebook_version": book.version, "observation_date": date,
        }})
    return tasks


def export_sample_tasks(derived: Path, date: str, book: Codebook, sample: Any,
                        claims_text: dict[str, str]) -> list[dict]:
    """Label Studio tasks for a drawn review sample (``citeaudit.support.sample``), in pair
    order: the claim and the passage the primary grader saw (not its label: people judge
    blind), and the design — ``sample_id``, ``stratum``, ``inclusion_prob`` — that comes back
    with the export and is checked on import."""
    part = {"observation_date": date, "codebook": book.version}
    graded = parquet_io.read_optional(derived, "grader_judgments", part)
    seen: dict[tuple[str, str], dict] = {}
    if graded is not None:
        for r in graded.to_pylist():
            if r["grader"] == book.graders.primary:
                seen[(r["claim_id"], r["citation_id"])] = r
    tasks = []
    for r in sample.to_pylist():
        g = seen.get((r["claim_id"], r["citation_id"]), {})
        when = g.get("capture_time")
        passage = g.get("passage_text") or ""
        tasks.append({"data": {
            "claim_id": r["claim_id"], "citation_id": r["citation_id"],
            "claim": claims_text.get(r["claim_id"], ""), "passage": passage,
            "passage_html": _passage_html(passage),
            "url": "", "capture_time": when.isoformat() if when is not None else "",
            "source": "captured " + (when.isoformat() if when is not None else
                                     "never (page unavailable)"),
            "evidence_verdict": "", "queue_reason": "review_sample",
            "engine": r["engine"], "domain": r["domain"],
            "codebook_version": book.version, "observation_date": date,
            "sample_id": r["sample_id"], "stratum": r["stratum"],
            "inclusion_prob": r["inclusion_prob"],
        }})
    return tasks


def check_sample_tasks(path: Path, raw: Path, doc: Any) -> list[str]:
    """Every task that says it belongs to a review sample must match the sample file: same
    sample id, the pair drawn, the same inclusion probability (a reason per mismatch)."""
    from citeaudit.support import sample as sample_mod

    reasons: list[str] = []
    cache: dict[tuple[str, str], dict | None] = {}
    for i, task in enumerate(doc if isinstance(doc, list) else []):
        data = task.get("data") if isinstance(task, dict) else None
        if not isinstance(data, dict) or not data.get("sample_id"):
            continue
        key = (str(data.get("observation_date")), str(data.get("codebook_version")))
        if key not in cache:
            try:
                table = sample_mod.read_optional(raw, *key)
            except sample_mod.SampleError as exc:
                reasons.append(f"task[{i}].data.sample_id: {exc}")
                cache[key] = None
                continue
            cache[key] = None if table is None else {
                (r["claim_id"], r["citation_id"]): r for r in table.to_pylist()}
        drawn = cache[key]
        where = f"task[{i}].data"
        if drawn is None:
            reasons.append(f"{where}.sample_id: no review sample for {key[0]} × codebook "
                           f"{key[1]} in {raw} (annotations/samples/)")
            continue
        row = drawn.get((data.get("claim_id"), data.get("citation_id") or ""))
        if row is None:
            reasons.append(f"{where}: pair {data.get('claim_id')}/{data.get('citation_id')} "
                           "is not in the review sample")
        elif row["sample_id"] != data["sample_id"]:
            reasons.append(f"{where}.sample_id: {data['sample_id']!r}, the sample file says "
                           f"{row['sample_id']!r} (drawn again since the export?)")
        elif not isinstance(data.get("inclusion_prob"), int | float) or \
                abs(float(data["inclusion_prob"]) - row["inclusion_prob"]) > 1e-12:
            reasons.append(f"{where}.inclusion_prob: {data.get('inclusion_prob')!r}, the "
                           f"sample file says {row['inclusion_prob']!r}")
    return reasons


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a per-process temporary name and a rename."""
    storage.write_bytes_atomic(path, text.encode("utf-8"))


def _registry_map(raw: Path) -> dict[str, str]:
    path = raw / "annotations" / "annotators.csv"
    if not path.is_file():
        raise ExportError(path, ["no annotator registry: Label Studio users cannot be mapped "
                                 "to annotator ids"])
    table = pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(
        strings_can_be_null=False, column_types={"annotator_id": "string",
                                                 "label_studio_user": "string"}))
    ids = table.column("annotator_id").to_pylist()
    out = {i: i for i in ids}
    if "label_studio_user" in table.column_names:
        for a, u in zip(ids, table.column("label_studio_user").to_pylist(), strict=True):
            if u:
                out[u] = a
    return out


def _user(completed_by: Any) -> str | None:
    if isinstance(completed_by, dict):
        value = completed_by.get("email") or completed_by.get("id")
    else:
        value = completed_by
    if isinstance(value, bool) or value is None or value == "":
        return None
    return str(value)


def parse_export(path: Path, doc: Any, users: dict[str, str],
                 choices: dict[str, set[str] | None]) -> tuple[list[dict], int]:
    """(rows, cancelled count) of a parsed export; ExportError with every reason otherwise."""
    reasons: list[str] = []
    rows: list[dict] = []
    cancelled = 0
    if not isinstance(doc, list):
        raise ExportError(path, ["expected a JSON list of tasks (Label Studio JSON export)"])
    for i, task in enumerate(doc):
        where = f"task[{i}]"
        if not isinstance(task, dict) or not isinstance(task.get("data"), dict):
            reasons.append(f"{where}.data: missing or not an object")
            continue
        data = task["data"]
        for key in ("claim_id", "codebook_version"):
            if not isinstance(data.get(key), str) or not data.get(key):
                reasons.append(f"{where}.data.{key}: missing")
        allowed = choices.get(data.get("codebook_version")) if isinstance(
            data.get("codebook_version"), str) else None
        if isinstance(data.get("codebook_version"), str) and allowed is None:
            reasons.append(f"{where}.data.codebook_version: "
                           f"{data.get('codebook_version')!r} is not a codebook of the raw folder")
        anns = task.get("annotations", [])
        if not isinstance(anns, list):
            reasons.append(f"{where}.annotations: not a list")
            continue
        for j, ann in enumerate(anns):
            aw = f"{where}.annotations[{j}]"
            if not isinstance(ann, dict):
                reasons.append(f"{aw}: not an object")
                continue
            if ann.get("was_cancelled"):
                cancelled += 1
                continue
            user = _user(ann.get("completed_by"))
            if user is None:
                reasons.append(f"{aw}.completed_by: missing")
            elif user not in users:
                reasons.append(f"{aw}.completed_by: Label Studio user {user!r} is not in the "
                               "annotator registry")
            result = ann.get("result") or []
            picked = [r for r in (result if isinstance(result, list) else [])
                      if isinstance(r, dict) and r.get("type") == "choices"
                      and r.get("from_name") == FROM_NAME and isinstance(r.get("value"), dict)]
            values = [c for r in picked for c in _list(r["value"].get("choices"))]
            if len(values) == 1 and not isinstance(values[0], str):
                reasons.append(f"{aw}.result: the choice is a {type(values[0]).__name__}, not a "
                               "label")
                continue
            if len(values) != 1:
                reasons.append(f"{aw}.result: expected one '{FROM_NAME}' choice, found "
                               f"{len(values)}")
                continue
            if allowed is not None and values[0] not in allowed:
                reasons.append(f"{aw}.result: choice {values[0]!r} is not a label of the "
                               "codebook's support schema")
            when = ann.get("created_at")
            if not isinstance(when, str) or not when:
                reasons.append(f"{aw}.created_at: missing")
            elif not _is_time(when):
                reasons.append(f"{aw}.created_at: {when[:40]!r} is not an ISO 8601 time")
            if user is not None and user in users and _is_time(when):
                rows.append({"claim_id": data.get("claim_id"),
                             "citation_id": data.get("citation_id") or "",
                             "annotator_id": users[user], "label": values[0],
                             "evidence_span": "", "annotated_at": when,
                             "codebook_version": data.get("codebook_version"),
                             "grader": "human"})
    for k, row in enumerate(rows):
        for column in ("claim_id", "citation_id"):
            if str(row[column]).startswith(FORMULA_START):
                reasons.append(f"row {k + 1} ({column}): {str(row[column])[:40]!r} starts as a "
                               "spreadsheet formula would; no citeaudit id does")
    if reasons:
        raise ExportError(path, reasons)
    return rows, cancelled


# A CSV cell starting with one of these is evaluated by spreadsheets (formula injection). The
# imported CSV holds only ids, labels of the codebook, registered annotators and times, none of
# which starts so: a task that would write one is refused (and nothing can be neutralized into
# a value that no longer matches its claim).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _is_time(value: Any) -> bool:
    """An ISO 8601 time string (what Label Studio writes as ``created_at``)."""
    import datetime as dt

    if not isinstance(value, str) or not value:
        return False
    try:
        dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _codebook_choices(raw: Path, doc: Any) -> dict[str, set[str] | None]:
    from citeaudit.codebook import CodebookError, load_version

    versions = {t["data"].get("codebook_version") for t in doc if isinstance(t, dict)
                and isinstance(t.get("data"), dict)} if isinstance(doc, list) else set()
    out: dict[str, set[str] | None] = {}
    for v in sorted(x for x in versions if isinstance(x, str) and x):
        try:
            out[v] = set(_choices(load_version(raw, v)))
        except CodebookError:
            out[v] = None
    return out


def import_export(path: Path, raw: Path) -> dict:
    """Import one Label Studio JSON export into ``raw/annotations/support/``."""
    data = Path(path).read_bytes()
    try:
        doc = load_json(decode_utf8(data))
    except JsonRejected as exc:
        raise ExportError(Path(path), [f"not valid JSON ({exc.reason}): {exc.detail}"]) from None
    rows, cancelled = parse_export(Path(path), doc, _registry_map(Path(raw)),
                                   _codebook_choices(Path(raw), doc))
    mismatched = check_sample_tasks(Path(path), Path(raw), doc)
    if mismatched:
        raise ExportError(Path(path), mismatched)
    rows.sort(key=lambda r: (r["claim_id"], r["citation_id"], r["annotator_id"],
                             r["annotated_at"]))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    out = (Path(raw) / "annotations" / "support" /
           f"label-studio-{hashlib.sha256(data).hexdigest()[:12]}.csv")
    write_atomic(out, buf.getvalue())
    return {"file": str(out), "rows": len(rows), "cancelled": cancelled, "tasks": len(doc)}
