"""Orchestration of ``citeaudit demo-corpus``: answers, annotations, codebooks, WARCs, truth.

Phase 1 streams answers day by day into ``answers/<date>/<engine>.jsonl`` (planting line and
claim defects at known rates, plus at least one of each kind so even a small corpus exercises
every rule), writes the day's support and source-risk annotations alongside, and remembers
only which sources were cited on which day (one byte per source and day). Phase 2 replays the
crawl plan and writes the WARC files record by record. ``ground_truth.json`` is written last,
so its presence marks a complete corpus.
"""

from __future__ import annotations

import csv
import json
import math
import shutil
from collections import Counter
from contextlib import ExitStack
from datetime import date, datetime
from pathlib import Path
from typing import IO

from citeaudit.demo_corpus import (
    alignment_cases,
    annotations,
    codebooks,
    evidence_cases,
    registry,
    source_risk_defects,
    support_planted,
    vocab,
    warcs,
)
from citeaudit.demo_corpus import answers as answers_mod
from citeaudit.demo_corpus.world import Panel, Params, World, load_external_queries, rng_for

DEFAULT_WARC_MAX_BYTES = 48 * 1024 * 1024
OWNED = ("answers", "warc", "annotations/support", "annotations/source_risk",
         "annotations/annotators.csv", "annotations/samples", "judge_cache",
         "codebooks/v1.yaml", "codebooks/v2.yaml", "registry", "ground_truth.json",
         annotations.SUPPORT_TRUTH, "citeaudit.yaml", "fetch_logs")
LINE_KINDS = ("malformed_json", "missing_field", "wrong_type", "span_out_of_range",
              "invalid_timestamp", "duplicate_id")
CLAIM_KINDS = ("missing_citation", "malformed_web", "malformed_rag", "hallucinated_citation",
               "zero_claims")


class _Progress:
    """A rich progress display on stderr, or nothing."""

    def __init__(self, enabled: bool, answers_total: int, crawl_total: int) -> None:
        self.enabled = enabled
        if not enabled:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn("[bold]{task.description:<8}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), TimeRemainingColumn(), console=Console(stderr=True),
        )
        self.progress.start()
        self.answers = self.progress.add_task("answers", total=answers_total)
        self.crawl = self.progress.add_task("crawl", total=crawl_total)

    def answer(self, n: int = 1) -> None:
        if self.enabled:
            self.progress.advance(self.answers, n)

    def crawled(self, n: int) -> None:
        if self.enabled:
            self.progress.advance(self.crawl, n)

    def stop(self) -> None:
        if self.enabled:
            self.progress.stop()


def _prepare(out: Path, overwrite: bool | None) -> None:
    """Clear what a previous demo corpus left; refuse to clobber anything else."""
    present = [out / p for p in OWNED if (out / p).exists()]
    if not present:
        return
    ours = False
    truth = out / "ground_truth.json"
    if truth.is_file():
        try:
            ours = "generator" in json.loads(truth.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            ours = False
    if overwrite is False or (overwrite is None and not ours):
        names = ", ".join(str(p.relative_to(out)) for p in present)
        raise FileExistsError(
            f"{out} already holds {names} and no demo ground_truth.json; use --force to replace"
        )
    for p in present:
        if p.is_dir():
            shutil.rmtree(p)
        else:
            p.unlink()


class _DayFiles:
    """The open files of one observation day, with per-file line counters."""

    def __init__(self, out: Path, day: date, stack: ExitStack) -> None:
        self.out = out
        self.day = day.isoformat()
        self.stack = stack
        self.handles: dict[str, IO[str]] = {}
        self.lines: Counter = Counter()
        (out / "answers" / self.day).mkdir(parents=True, exist_ok=True)

    def rel(self, engine: str) -> str:
        return f"answers/{self.day}/{engine}.jsonl"

    def write(self, engine: str, line: str) -> int:
        """Append a line to an engine's file; returns its 1-based line number."""
        fh = self.handles.get(engine)
        if fh is None:
            path = self.out / self.rel(engine)
            fh = self.stack.enter_context(path.open("w", encoding="utf-8", newline="\n"))
            self.handles[engine] = fh
        fh.write(line + "\n")
        self.lines[engine] += 1
        return self.lines[engine]


def generate(
    out: Path,
    *,
    seed: int = 7,
    answers: int = 600,
    days: int = 3,
    start_date: date = date(2026, 11, 1),
    progress: bool = False,
    queries: Path | None = None,
    warc_max_bytes: int = DEFAULT_WARC_MAX_BYTES,
    overwrite: bool | None = None,
) -> dict:
    """Generate the demo corpus under ``out``; returns a small summary dict.

    Same arguments → byte-identical files. ``queries`` (a JSONL file of ``query`` or
    ``prompt_text`` strings) replaces the built-in query templates. ``overwrite``: ``None``
    replaces a previous demo corpus but refuses foreign files, ``True`` always replaces,
    ``False`` never does.
    """
    if answers < 1 or days < 1:
        raise ValueError("answers and days must be at least 1")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _prepare(out, overwrite)
    params = Params(seed=seed, answers=answers, days=days, start_date=start_date)
    world = World.for_params(params)
    per_day = [answers // days + (1 if d < answers % days else 0) for d in range(days)]
    external = load_external_queries(queries) if queries else None
    panel = Panel(seed, max(1, math.ceil(max(per_day) / len(vocab.ENGINES))), external)
    builder = answers_mod.AnswerBuilder(world, panel, per_day)
    n_crawls = days + 2
    show = _Progress(progress, answers,
                     n_crawls * (world.scale.n_web + world.scale.n_kb))
    try:
        codebooks.write_codebooks(out / "codebooks")
        truth = _AnswerPhase(out, params, world, builder, per_day, show).run()
        truth["support"]["planted"] = support_planted.plant(out, seed, truth["dates"][0])
        crawl_dates = [d.isoformat() for d in params.crawl_dates]
        result = warcs.crawl_all(world, out, crawl_dates, builder.cited_web, builder.cited_kb,
                                 warc_max_bytes, tick=show.crawled)
    finally:
        show.stop()
    planted_warcs = alignment_cases.write_warcs(world, out)
    result.files.extend(warcs.FileStats(f, c) for f, c in planted_warcs.files)
    result.statuses.update(planted_warcs.statuses)
    result.truncated.extend(planted_warcs.truncated)
    ev_file, ev_counts = evidence_cases.write_warc(world, out)
    result.files.append(warcs.FileStats(ev_file, Counter(ev_counts)))
    result.statuses["200"] += ev_counts["response"]
    truth["crawl_dates"] = crawl_dates
    truth["warc"] = {
        "files": [{"file": f.file, "records": {k: f.records.get(k, 0) for k in
                                               ("response", "revisit", "request", "warcinfo",
                                                "resource", "metadata")}}
                  for f in result.files],
        "truncated": sorted(result.truncated, key=lambda t: (t["file"], t["url"])),
        "status_counts": dict(sorted(result.statuses.items())),
    }
    truth["planted"]["warc"] = dict(sorted(_warc_planted(world, builder, result).items()))
    truth["scholarly"] = registry.write_registry(out, world, builder.cited_web)
    (out / "ground_truth.json").write_text(
        json.dumps(truth, sort_keys=True, indent=1, ensure_ascii=False) + "\n",
        encoding="utf-8", newline="\n")
    records = sum(sum(f.records.values()) for f in result.files)
    warc_bytes = sum((out / f.file).stat().st_size for f in result.files)
    planted = truth["planted"]
    return {
        "out": str(out),
        "answers": answers,
        "answer_lines": truth["counts"]["answer_lines"],
        "accepted_answers": truth["counts"]["accepted_answers"],
        "claims": truth["counts"]["claims"],
        "citations": truth["counts"]["citations"],
        "warc_files": len(result.files),
        "warc_records": records,
        "warc_bytes": warc_bytes,
        "support_rows": truth["support"]["rows"],
        "source_risk_rows": truth["source_risk"]["rows"],
        "planted_defects": {
            "rejected_lines": dict(Counter(r["reason"] for r in truth["rejected_inputs"])),
            "claim_failures": dict(Counter(r["reason"] for r in truth["claim_failures"])),
            "truncated_records": len(result.truncated),
            "warc": planted["warc"],
        },
    }


FORCE_FROM = 20  # smaller corpora get defects at their natural rates only


def _forced_plan(seed: int, total: int) -> list[list]:
    """One forced occurrence of every defect kind, at a seeded position in the first 3/4.

    Rates alone could leave a small corpus without, say, a hallucinated citation, and a test
    that expects every rule to fire would then prove nothing.
    """
    if total < FORCE_FROM:
        return []
    rng = rng_for(seed, "forced")
    span = max(1, total * 3 // 4)
    plan = [[rng.randrange(span), kind] for kind in LINE_KINDS + CLAIM_KINDS]
    return sorted(plan)


class _AnswerPhase:
    """Phase 1: stream every day's answers and annotations, collecting ground truth."""

    def __init__(self, out: Path, params: Params, world: World,
                 builder: answers_mod.AnswerBuilder, per_day: list[int],
                 show: _Progress) -> None:
        self.out, self.params, self.world = out, params, world
        self.builder, self.per_day, self.show = builder, per_day, show
        self.counts = Counter({k: 0 for k in (
            "answer_lines", "accepted_answers", "claims", "citations", "rejected_lines",
            "verified_answers", "rejected_answers", "zero_claim_answers", "input_tokens_served",
            "output_tokens_served", "input_tokens_all", "output_tokens_all")})
        self.rejected: list[dict] = []
        # tuples, not dicts: at 100k answers these lists are most of the memory the run keeps
        self.claim_failures: list[tuple[str, str, int, str]] = []
        self.verdicts: list[tuple[str, bool, str | None, int | None]] = []
        self.support = Counter(rows=0, items_with_disagreement=0)
        self.source_risk = Counter(rows=0, null_predicate_rows=0)
        self.sr_day: list[dict] = []  # the day's good source-risk records, as written
        self.sr_texts: dict[str, str] = {}  # their answers' texts
        self.sr_planted: list[dict] = []
        self.sr_expected: list[dict] = []
        self.planted_claims: Counter = Counter()
        self.planted_urls: Counter = Counter()
        self.pending = _forced_plan(params.seed, params.answers)
        self.line_rng = rng_for(params.seed, "line-defects")
        blank_rng = rng_for(params.seed, "blank-lines")
        self.blanks = {(0, blank_rng.randrange(max(1, per_day[0]))),
                       (params.days - 1, blank_rng.randrange(max(1, per_day[-1])))}
        self.trailing_blank = (params.days - 1,
                               vocab.ENGINES[blank_rng.randrange(len(vocab.ENGINES))])
        self.index = 0  # answers generated so far, over all days
        self.alignment_truth: list[dict] = []
        self.evidence_truth: list[dict] = []
        self.support_truth = None  # the csv writer of annotations.SUPPORT_TRUTH, during run()

    def run(self) -> dict:
        """Generate every day; returns the answer half of ground truth."""
        with (self.out / annotations.SUPPORT_TRUTH).open("w", encoding="utf-8",
                                                          newline="") as truth_fh:
            self.support_truth = csv.writer(truth_fh, lineterminator="\n")
            self.support_truth.writerow(annotations.TRUTH_COLUMNS)
            for day, day_date in enumerate(self.params.dates):
                with ExitStack() as stack:
                    self._day(day, day_date, stack)
            self.support_truth = None
        p = self.params
        return {
            "generator": {"seed": p.seed, "answers": p.answers, "days": p.days,
                          "start_date": p.start_date.isoformat()},
            "dates": [d.isoformat() for d in p.dates],
            "counts": dict(sorted(self.counts.items())),
            "rejected_inputs": sorted(self.rejected, key=lambda r: (r["file"], r["line"])),
            "claim_failures": [
                {"answer_id": a, "claim_id": c, "claim_index": k, "reason": r}
                for a, c, k, r in sorted(self.claim_failures, key=lambda t: (t[0], t[2]))],
            "answer_verdicts": [
                {"answer_id": a, "verified": v, "reason": r, "claim_index": k}
                for a, v, r, k in sorted(self.verdicts, key=lambda t: t[0])],
            "support": dict(self.support),
            "source_risk": {**dict(self.source_risk),
                            "planted_defects": self.sr_planted,
                            "expected_endpoints": self.sr_expected},
            "alignment_cases": sorted(self.alignment_truth, key=lambda r: r["citation_id"]),
            "evidence_cases": sorted(self.evidence_truth, key=lambda r: r["citation_id"]),
            "planted": {"claims": dict(sorted(self.planted_claims.items())),
                        "citation_urls": dict(sorted(self.planted_urls.items()))},
        }

    # ------------------------------------------------------------------ one day
    def _day(self, day: int, day_date: date, stack: ExitStack) -> None:
        files = _DayFiles(self.out, day_date, stack)
        sup_dir = self.out / "annotations" / "support"
        sr_dir = self.out / "annotations" / "source_risk"
        sup_dir.mkdir(parents=True, exist_ok=True)
        sr_dir.mkdir(parents=True, exist_ok=True)
        sup_fh = stack.enter_context(
            (sup_dir / f"{files.day}.csv").open("w", encoding="utf-8", newline=""))
        sup = csv.writer(sup_fh, lineterminator="\n")
        sup.writerow(annotations.SUPPORT_COLUMNS)
        sr_fh = stack.enter_context(
            (sr_dir / f"{files.day}.jsonl").open("w", encoding="utf-8", newline="\n"))
        revisions: list[dict] = []
        dups: dict[str, list[tuple[int, int]]] = {e: [] for e in vocab.ENGINES}
        for slot in range(self.per_day[day]):
            engine = vocab.ENGINES[slot % len(vocab.ENGINES)]
            self._emit_dups(files, dups, day, engine, final=False)
            if (day, slot) in self.blanks:
                files.write(engine, "")
            draft, kind = self._draft(day, slot, engine)
            if kind is not None:
                line, field = answers_mod.apply_line_defect(self.line_rng, draft.obj, kind)
                self._reject(files, engine, files.write(engine, line), field, kind)
            else:
                files.write(engine, answers_mod.serialize(draft.obj))
                self.counts["answer_lines"] += 1
                self._accept(draft)
                self._annotate(draft, day, slot, sup, sr_fh, revisions)
                if self._take_forced("duplicate_id") or \
                        self.line_rng.random() < answers_mod.P_DUPLICATE:
                    dups[engine].append((slot, files.lines[engine] + self.line_rng.randint(1, 3)))
            self.index += 1
            self.show.answer()
        if day == 0:
            self._plant_alignment_cases(files)
            self._plant_evidence_cases(files)
        if day == self.params.days - 1:
            self._plant_alignment_cases(files, last_day=True)
        for engine in vocab.ENGINES:
            self._emit_dups(files, dups, day, engine, final=True)
        if day == self.trailing_blank[0] and self.trailing_blank[1] in files.handles:
            files.write(self.trailing_blank[1], "")
        for rev in revisions:
            self._write_sr(sr_fh, rev)
        self._plant_sr(sr_fh, files.day)

    def _plant_alignment_cases(self, files: _DayFiles, last_day: bool = False) -> None:
        """Append the planted alignment answers to the first day's file (``last_day``: the
        one citing the last-day cases, to the last day's file)."""
        for draft, rows in alignment_cases.build_answers(self.world, last_day):
            files.write(draft.engine, answers_mod.serialize(draft.obj))
            self.counts["answer_lines"] += 1
            self._accept(draft)
            self.alignment_truth.extend(rows)

    def _plant_evidence_cases(self, files: _DayFiles) -> None:
        """Append the planted evidence answer to the first day's file."""
        draft, rows = evidence_cases.build_answer(self.world)
        files.write(draft.engine, answers_mod.serialize(draft.obj))
        self.counts["answer_lines"] += 1
        self._accept(draft)
        self.evidence_truth.extend(rows)

    def _take_forced(self, kind: str) -> bool:
        """Consume a due forced occurrence of ``kind`` if there is one."""
        for item in self.pending:
            if item[0] <= self.index and item[1] == kind:
                self.pending.remove(item)
                return True
        return False

    def _draft(self, day: int, slot: int, engine: str) -> tuple[answers_mod.AnswerDraft,
                                                                str | None]:
        """Build the answer of a slot and pick its line defect (None: the line is clean)."""
        due = [p for p in self.pending if p[0] <= self.index]
        kind: str | None = None
        forced_claim: str | None = None
        forced_item = None
        for item in due:
            if item[1] in LINE_KINDS and item[1] != "duplicate_id":
                kind, forced_item = item[1], item
                break
            if item[1] in CLAIM_KINDS and _claim_kind_fits(item[1], engine):
                forced_claim, forced_item = item[1], item
                break
        if kind is None and forced_claim is None:
            r, acc = self.line_rng.random(), 0.0
            for k, rate in zip(answers_mod.LINE_DEFECTS, answers_mod.LINE_RATES, strict=True):
                acc += rate
                if r < acc:
                    kind = k
                    break
        claim_kind = {"malformed_web": "malformed_citation", "malformed_rag": "malformed_citation",
                      "zero_claims": None}.get(forced_claim or "", forced_claim)
        draft = self.builder.build(day, slot, plant=kind is None,
                                   forced=claim_kind if kind is None else None,
                                   decline=True if forced_claim == "zero_claims" else None)
        if kind is not None and not answers_mod.line_defect_applicable(kind, draft.obj):
            kind, forced_item = None, None  # a forced kind stays pending for a later answer
            draft = self.builder.build(day, slot, plant=True)
        if forced_item is not None and (kind is not None or draft.forced_done
                                        or forced_claim == "zero_claims"):
            self.pending.remove(forced_item)
        return draft, kind

    def _emit_dups(self, files: _DayFiles, dups: dict, day: int, engine: str,
                   final: bool) -> None:
        """Write due retries: a regenerated answer logged again under the same answer_id."""
        keep = []
        for slot, due in dups[engine]:
            if final or files.lines[engine] >= due:
                retry = self.builder.build(day, slot, attempt=1, plant=False)
                n = files.write(engine, answers_mod.serialize(retry.obj))
                self._reject(files, engine, n, "answer_id", "duplicate_id")
            else:
                keep.append((slot, due))
        dups[engine] = keep

    def _reject(self, files: _DayFiles, engine: str, line: int, field: str | None,
                reason: str) -> None:
        self.counts["answer_lines"] += 1
        self.counts["rejected_lines"] += 1
        self.rejected.append({"file": files.rel(engine), "line": line, "field": field,
                              "reason": reason})

    def _write_sr(self, fh: IO[str], record: dict) -> None:
        fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.sr_day.append(record)
        self.source_risk["rows"] += 1
        self.source_risk["null_predicate_rows"] += None in record["predicates"].values()

    def _plant_sr(self, fh: IO[str], day: str) -> None:
        """Append the day's planted source-risk defects; note expected outcomes."""
        rng = rng_for(self.params.seed, "source-risk-defects", day)
        rev = source_risk_defects.ensure_revision(self.sr_day, annotations.record_digest)
        if rev is not None:
            self._write_sr(fh, rev)
        line = len(self.sr_day)
        for defect, text in source_risk_defects.plant(rng, self.sr_day, self.sr_texts):
            fh.write(text + "\n")
            line += 1
            self.sr_planted.append({"file": f"{day}.jsonl", "line": line,
                                    "defect_type": defect})
        for e in source_risk_defects.expected_endpoints(self.sr_day, annotations.record_digest):
            self.sr_expected.append({"observation_date": day, **e})
        self.sr_day, self.sr_texts = [], {}

    def _annotate(self, draft: answers_mod.AnswerDraft, day: int, slot: int, sup,
                  sr_fh: IO[str], revisions: list[dict]) -> None:
        rng = rng_for(self.params.seed, "annotate", day, slot)
        observed = datetime.strptime(draft.obj["observed_at"], "%Y-%m-%dT%H:%M:%SZ")
        rows, disagreements = annotations.support_rows(rng, draft, observed)
        sup.writerows(rows)
        self.support["rows"] += len(rows)
        self.support["items_with_disagreement"] += disagreements
        records, revs = annotations.source_risk_rows(self.world, rng, draft, observed)
        if records:
            self.sr_texts[draft.obj["answer_id"]] = draft.obj["answer_text"]
        for record in records:
            self._write_sr(sr_fh, record)
        revisions.extend(revs)

    def _accept(self, draft: answers_mod.AnswerDraft) -> None:
        """Account for one accepted answer: counts, cost, verdict and failing claims."""
        obj = draft.obj
        counts = self.counts
        failures = answers_mod.verify_citations(obj)
        planted = [(k, cl.defect) for k, cl in enumerate(draft.claims) if cl.defect]
        assert failures == planted, (obj["answer_id"], failures, planted)
        if self.support_truth is not None:
            self.support_truth.writerows(annotations.truth_rows(draft))
        counts["accepted_answers"] += 1
        counts["claims"] += len(obj["claims"])
        counts["citations"] += sum(len(c["citations"]) for c in obj["claims"])
        cost = obj.get("cost") or {}
        tin, tout = cost.get("input_tokens", 0), cost.get("output_tokens", 0)
        counts["input_tokens_all"] += tin
        counts["output_tokens_all"] += tout
        if not obj["claims"]:
            counts["zero_claim_answers"] += 1
        if failures:
            counts["rejected_answers"] += 1
            k, reason = failures[0]
            self.verdicts.append((obj["answer_id"], False, reason, k))
        else:
            counts["verified_answers"] += 1
            counts["input_tokens_served"] += tin
            counts["output_tokens_served"] += tout
            self.verdicts.append((obj["answer_id"], True, None, None))
        for k, reason in failures:
            self.claim_failures.append((obj["answer_id"], obj["claims"][k]["claim_id"], k, reason))
            self.planted_claims[reason] += 1
        for cl in draft.claims:
            for cd in cl.citations:
                if cd.kind == "web" and not cd.defect:
                    for feature in _url_features(cd.obj["url"]):
                        self.planted_urls[feature] += 1


def _url_features(url: str) -> list[str]:
    """Which canonicalisation traps a cited URL carries."""
    out = []
    if "#:~:text=" in url:
        out.append("text_fragment")
    if any(t in url for t in ("utm_", "fbclid=", "gclid=", "mc_eid=")):
        out.append("tracking_params")
    host = url.split("://", 1)[1].split("/", 1)[0]
    if host != host.lower():
        out.append("uppercase_host")
    if host.endswith((":443", ":80")):
        out.append("default_port")
    return out


def _claim_kind_fits(kind: str, engine: str) -> bool:
    rag = engine == "inhouse_rag"
    if kind in ("malformed_rag", "hallucinated_citation"):
        return rag
    if kind == "malformed_web":
        return not rag
    return True


def _warc_planted(world: World, builder, result: warcs.CrawlResult) -> Counter:
    """What the crawl plan put in the archive for cited sources, by kind."""
    from citeaudit.demo_corpus.world import web_source

    planted: Counter = Counter()
    for g in range(world.scale.n_web):
        if not any(day[g] for day in builder.cited_web):
            continue
        src = web_source(world, g)
        planted[f"plan_{src.plan}"] += 1
        if src.content_encoding:
            planted["content_encoding_gzip"] += 1
        if src.chunked:
            planted["chunked"] += 1
        if src.charset != "utf-8":
            planted["legacy_charset"] += 1
        if src.scholarly_defect:
            planted[f"scholarly_{src.scholarly_defect}"] += 1
        if src.change_kind:
            planted[f"changed_{src.change_kind}"] += 1
    planted["truncated_records"] = len(result.truncated)
    return planted


