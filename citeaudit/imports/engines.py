"""``citeaudit import openai|gemini|anthropic|perplexity``: engine responses into the raw layout.

Per input file (one JSON response, or JSONL with one response a line):

- the file is kept verbatim as ``responses/<format>/<date>/<stem>-<sha8><suffix>`` (so an import
  can be redone; the pipeline never reads this folder);
- each response that reads cleanly becomes one answer in
  ``answers/<date>/<format>-<stem>-<sha8>.jsonl`` (``<date>`` is the UTC date of its
  ``observed_at``: the response's creation time unless ``--observed-at`` is given);
- each defect of a response that does not (truncated JSON, unknown shape, offsets outside the
  text, a marker with no source, a segment whose text does not match) becomes a line of
  ``import_rejections/<date>/<format>-<stem>-<sha8>.jsonl``, which the ingest stage turns into
  ``rejected_inputs`` rows (file, line, field, reason), and the batch goes on;
- importing the same bytes again replaces what the earlier import wrote (keyed by ``<sha8>``,
  whatever ``--observed-at`` or ``--engine`` said): no answer on two dates, no stale rejection.

A raw folder without a codebook gets the import codebook (``codebooks/v1.yaml``), so the
judged stages run. A response with a defect is rejected whole, like a bad answers line at
ingest. Responses name no query; the query is unknown (empty ``query_text``) unless ``collect``
supplies it. Writes are atomic and deterministic: the same files give the same bytes.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from citeaudit import layout, untrusted
from citeaudit.imports import (
    anthropic_messages,
    gemini_grounding,
    openai_responses,
    perplexity_sonar,
    writer,
)
from citeaudit.imports.engine_answer import Defect, ShapeError, rfc3339, to_answer
from citeaudit.untrusted import JsonRejected

FORMATS: dict[str, ModuleType] = {
    "openai": openai_responses,
    "gemini": gemini_grounding,
    "anthropic": anthropic_messages,
    "perplexity": perplexity_sonar,
}
RESPONSES_DIR = "responses"
REJECTIONS_DIR = "import_rejections"
RAW_FRAGMENT = 2000  # characters of the offending response kept in a rejection row


@dataclass(frozen=True)
class Query:
    """What collect knows about the question behind a response."""

    query_id: str
    query_text: str
    stratum: str = "unknown"


@dataclass
class Outcome:
    """One response, converted: its answer, or the defects that kept it out."""

    line: int
    answer: dict | None
    defects: list[Defect]
    raw: str
    observed_at: str | None
    file: str | None = None


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file unique to this process."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def convert(fmt: str, text: str | JsonRejected, *, line: int, engine: str, observed_at: str | None,
            query: Query | None, origin: dict, received_at: str | None = None) -> Outcome:
    """Read one response's JSON text into an answer, or into the defects that reject it.

    ``observed_at`` (given) wins over the response's creation time, which wins over
    ``received_at`` (when ``collect`` got the response)."""
    if isinstance(text, JsonRejected):  # the line's bytes are not UTF-8
        return Outcome(line, None, [Defect("", text.reason, text.detail)], "", observed_at)
    try:
        obj = untrusted.load_json(text)
    except JsonRejected as exc:
        return Outcome(line, None, [Defect(exc.field, exc.reason, exc.detail)], text, observed_at)
    try:
        parsed = FORMATS[fmt].parse(obj)
    except ShapeError as exc:
        return Outcome(line, None, [Defect(exc.field, exc.reason, exc.detail)], text,
                       observed_at)
    except (ValueError, TypeError, KeyError, AttributeError, IndexError, OverflowError,
            RecursionError) as exc:
        return Outcome(line, None, [Defect("", "unknown_shape", f"{type(exc).__name__}: {exc}"
                                           [:300])], text, observed_at)
    defects = list(parsed.defects)
    for name, value in (("model", parsed.model), ("id", parsed.response_id)):
        if value is not None and not isinstance(value, str):
            defects.append(Defect(name, "wrong_type", f"expected a string, got "
                                                      f"{type(value).__name__}"))
    when = observed_at or parsed.created_at or received_at
    if when is None:
        defects.append(Defect("created_at", "missing_field",
                              f"a {fmt} response has no creation time: give --observed-at"))
    if defects:
        return Outcome(line, None, defects, text, when)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    answer_id = f"{engine}-{digest}"
    q = query or Query(f"unknown-{answer_id}", "")
    answer = to_answer(parsed, answer_id=answer_id, query_id=q.query_id, query_text=q.query_text,
                       engine=engine, observed_at=when, stratum=q.stratum,
                       origin={**origin, "line": line, "format": fmt})
    return Outcome(line, answer, [], text, when)


def _lines(data: bytes, suffix: str) -> list[tuple[int, str | JsonRejected]]:
    """(line number, JSON text) of each response in a file; JSONL has one a line. A line (or a
    JSON file) that is not UTF-8 comes back as its :class:`JsonRejected` (``invalid_utf8``),
    never with replacement characters, and the other lines are read."""
    if suffix != ".jsonl":
        return [(1, decoded(data))]
    return [(n, decoded(b)) for n, b in enumerate(data.split(b"\n"), start=1) if b.strip()]


def decoded(data: bytes) -> str | JsonRejected:
    """One response's bytes as text, or the ``invalid_utf8`` rejection (for :func:`convert`)."""
    try:
        return untrusted.decode_utf8(data).removesuffix("\r")
    except JsonRejected as exc:
        return exc


def _date(ts: str | None) -> str | None:
    return None if ts is None else ts[:10]


def write_outcomes(out: Path, fmt: str, kept: str, stem: str,
                   outcomes: Iterable[Outcome]) -> dict[str, int]:
    """Answers and rejection lines of one kept file, grouped by date; returns counts."""
    answers: dict[str, list[dict]] = {}
    rejects: dict[str, list[dict]] = {}
    fallback = min((o.observed_at for o in outcomes if o.observed_at), default=None)
    counts = {"answers": 0, "rejected_responses": 0, "rejections": 0, "claims": 0,
              "citations": 0, "quotes": 0}
    for o in outcomes:
        if o.answer is not None:
            answers.setdefault(_date(o.observed_at), []).append(o.answer)
            counts["answers"] += 1
            counts["claims"] += len(o.answer["claims"])
            cites = [c for cl in o.answer["claims"] for c in cl["citations"]]
            counts["citations"] += len(cites)
            counts["quotes"] += sum(1 for c in cites if c.get("quote"))
            continue
        counts["rejected_responses"] += 1
        day = _date(o.observed_at or fallback) or kept.split("/")[2]
        for d in o.defects:
            counts["rejections"] += 1
            rejects.setdefault(day, []).append({
                "source": f"import:{fmt}", "file": o.file or kept, "line": o.line, "field": d.field,
                "reason": d.reason, "detail": d.detail, "raw": o.raw[:RAW_FRAGMENT]})
    for folder, groups in (("answers", answers), (REJECTIONS_DIR, rejects)):
        for day, rows in sorted(groups.items()):
            body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
            atomic_write(out / folder / day / f"{fmt}-{stem}.jsonl", body.encode("utf-8"))
    for day in rejects:
        # `citeaudit run` finds its dates under answers/: a day whose every response was
        # rejected must still be run, or its rejections would never reach rejected_inputs
        (out / "answers" / day).mkdir(parents=True, exist_ok=True)
    return counts


def import_paths(fmt: str, paths: list[Path], out: Path, *, engine: str | None = None,
                 observed_at: str | None = None, label: str | None = None) -> list[dict]:
    """Import response files of one format into ``out``; one summary per input file.
    ``label``: the answers' ``system_version`` (a model or retrieval version, compared
    before vs after in ``comparisons``)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(sorted(FORMATS))}")
    when = rfc3339(observed_at) if observed_at else None
    engine = engine or fmt
    loaded = []
    for path in paths:
        data = Path(path).read_bytes()
        stem = f"{Path(path).stem}-{hashlib.sha256(data).hexdigest()[:8]}"
        outcomes = [convert(fmt, text, line=n, engine=engine, observed_at=when, query=None,
                            origin={"file": Path(path).name})
                    for n, text in _lines(data, Path(path).suffix)]
        loaded.append((Path(path), data, stem, outcomes))
    batch_day = min((o.observed_at[:10] for *_, oc in loaded for o in oc if o.observed_at),
                    default=None)
    summaries = []
    for path, data, stem, outcomes in loaded:
        days = [o.observed_at[:10] for o in outcomes if o.observed_at]
        day = min(days, default=None) or batch_day or dt.datetime.fromtimestamp(
            path.stat().st_mtime, tz=dt.UTC).date().isoformat()
        kept = f"{RESPONSES_DIR}/{fmt}/{day}/{stem}{path.suffix}"
        if (out / kept).resolve() != path.resolve():
            atomic_write(out / kept, data)
        for o in outcomes:
            if o.answer is not None:
                o.answer["import"]["file"] = kept
                if label is not None:
                    o.answer["system_version"] = label
        replaced = forget_earlier(out, fmt, stem, path.suffix, keep=kept)
        counts = write_outcomes(out, fmt, kept, stem, outcomes)
        # answer dates this re-import left without answers: their derived outputs no longer
        # match any input (the next `citeaudit run` removes them, docs/operations.md)
        emptied = sorted({r.split("/")[1] for r in replaced if r.startswith("answers/")
                          and not (out / "answers" / r.split("/")[1]).is_dir()})
        summaries.append({"file": str(path), "kept": kept, "engine": engine, **counts,
                          "replaced": replaced, "dates_emptied": emptied})
    ensure_codebook(out)
    return summaries


def forget_earlier(out: Path, fmt: str, stem: str, suffix: str, *, keep: str) -> list[str]:
    """Remove what an earlier import of the same bytes wrote (answers, rejection lines, the
    kept response), whatever its options (``--observed-at`` moves it to another date,
    ``--engine`` renames its answers, another file name holds the same bytes): re-importing a
    response replaces it, so no answer sits on two dates and no stale rejection stays counted.
    A date folder left empty goes too. Returns the removed paths, relative to ``out``."""
    digest = stem.rsplit("-", 1)[-1]
    removed: list[Path] = []
    for folder in ("answers", REJECTIONS_DIR):
        removed += sorted((out / folder).glob(f"*/{fmt}-*-{digest}.jsonl"))
    removed += [p for p in sorted((out / RESPONSES_DIR / fmt).glob(f"*/*-{digest}{suffix}"))
                if p != out / keep]
    for p in removed:
        p.unlink()
    for day in sorted({p.parent.name for p in removed}):
        rejections = out / REJECTIONS_DIR / day
        if rejections.is_dir() and not any(rejections.iterdir()):
            rejections.rmdir()
        for folder in (out / "answers" / day, out / RESPONSES_DIR / fmt / day):
            if folder.is_dir() and not any(folder.iterdir()) and not rejections.is_dir():
                folder.rmdir()
    return [p.relative_to(out).as_posix() for p in removed]


def ensure_codebook(out: Path) -> None:
    """Give a raw folder without any codebook the import codebook, so the judged stages (L1,
    L2, metrics) run on the imported day; a folder with its own codebooks is left alone."""
    if not layout.codebook_versions(out):
        writer.write_codebook(out)
