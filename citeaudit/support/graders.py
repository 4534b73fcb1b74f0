"""Graders: machines that label every cited (claim, citation) pair on the codebook's scale.

A grader labels the items of one date × codebook (:func:`items`: claim, the passage the
evidence locator found, capture time) and writes ``grader_judgments`` rows: its name, version,
a digest of what determines its output (the locator's settings; the judge's prompt, model and
parameters), the label on the support rubric's five values, a confidence where it has one, a
score where it has one, and the passage it saw. A grader's labels are never gold: the
adjudicated labels (``support_labels``) count human votes only, the metrics that count human
judgments read those, and a grader's own share of ``fully_supported`` is never shown as a rate.
Its labels are used in one way only: as the prediction of a prediction-powered estimate
(:mod:`citeaudit.stats.ppi`) beside the human-only one, on a sample people labelled.

Built in:

- ``locator`` (default, offline, deterministic): the evidence locator's atom verdicts turned
  into a label (``sql/support/select_locator_judgments.sql``).
- ``llm``: a judge over an OpenAI-compatible chat-completions endpoint
  (:mod:`citeaudit.support.judge`), off unless ``CITEAUDIT_JUDGE_BASE_URL`` is set.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Protocol

import pyarrow as pa

from citeaudit import duck, storage
from citeaudit.codebook import Codebook
from citeaudit.support import evidence
from citeaudit.support.grader_schema import SCHEMA, digest_of

__all__ = ["SCHEMA", "Grader", "LocatorGrader", "digest_of", "grade_all", "graders", "items"]

LOCATOR = "locator"
LOCATOR_VERSION = "1.0"


class Grader(Protocol):
    """What every grader provides: a name, a version, a digest and its labels of items."""

    name: str
    version: str

    def digest(self) -> str:
        """SHA-256 of everything that determines the grader's output (prompt, model, rules)."""
        ...

    def grade(self, items: pa.Table) -> pa.Table:
        """``grader_judgments`` rows (``SCHEMA``) for the rows of :func:`items`."""
        ...


def items(support_evidence: pa.Table, claims: pa.Table) -> pa.Table:
    """One row per cited (claim, citation) pair: the claim, the passage a grader sees, the
    page's unavailable reason and the locator's view (``select_grader_items.sql``)."""
    con = duck.connect()
    try:
        con.register("evidence", support_evidence)
        con.register("claims", claims.select(["claim_id", "text"]))
        return duck.query(con, "support/select_grader_items")
    finally:
        con.close()


class LocatorGrader:
    """The evidence locator as a grader: offline, deterministic, no confidence."""

    name = LOCATOR

    def __init__(self, book: Codebook) -> None:
        self.book = book
        self.version = (f"{LOCATOR_VERSION}+{evidence.GRADER_VERSION}"
                        f"+{book.atomization.version}")

    def digest(self) -> str:
        return digest_of({"grader": self.name, "version": self.version,
                          "evidence": asdict(self.book.evidence),
                          "weights": {k: v for k, v in asdict(self.book.graders).items()
                                      if k.startswith("locator_")},
                          "atomization": asdict(self.book.atomization)})

    def grade(self, items: pa.Table) -> pa.Table:
        con = duck.connect()
        try:
            con.register("items", items)
            g = self.book.graders
            out = duck.query(con, "support/select_locator_judgments", {
                "grader": self.name, "version": self.version, "digest": self.digest(),
                "coverage_weight": g.locator_coverage_weight,
                "mismatch_penalty": g.locator_mismatch_penalty,
                "pass": g.locator_pass, "fail": g.locator_fail})
        finally:
            con.close()
        return out.cast(SCHEMA)


def graders(book: Codebook, raw: Path | None = None,
            environ: dict[str, str] | None = None) -> list[Grader]:
    """The graders a run uses: ``locator`` always; ``llm`` when its endpoint is configured
    (``CITEAUDIT_JUDGE_BASE_URL``, see :mod:`citeaudit.support.judge`; replies cached under
    ``raw/judge_cache/``)."""
    from citeaudit.support import judge

    out: list[Grader] = [LocatorGrader(book)]
    cache = storage.path(raw) / judge.CACHE_DIR if raw is not None else None
    settings = judge.settings_from_env(environ, cache)
    if settings is not None:
        out.append(judge.LLMGrader(book, settings))
    return out


def grade_all(grader_list: list[Grader], graded_items: pa.Table) -> pa.Table:
    """Every grader's rows, in the table's order (claim_id, citation_id, grader)."""
    tables = [g.grade(graded_items).select(SCHEMA.names).cast(SCHEMA) for g in grader_list]
    table = pa.concat_tables(tables) if tables else SCHEMA.empty_table()
    return table.sort_by([("claim_id", "ascending"), ("citation_id", "ascending"),
                          ("grader", "ascending")])
