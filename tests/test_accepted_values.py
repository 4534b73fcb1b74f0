"""Accepted values, as dbt's ``accepted_values`` test: every verdict and reason column of a demo
run holds only the values docs/tables.md lists for it.

docs/tables.md lists a column's values after ``Values:`` in its description, each in backticks;
``<status>`` (any ``<...>``) stands for a number (``http_<status>`` accepts ``http_404``).
NULL is always accepted (a reason is NULL when there is nothing to explain). The shared demo run
(tests/conftest.py) is read straight from its parquet files, every partition of every table.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from citeaudit import catalog

# columns that record a decision or its code: each must list its values in docs/tables.md
DECISION_COLUMN = re.compile(r"^(verdict|reason|grain|margin|[a-z_]+_verdict|[a-z_]+_reason)$")
PLACEHOLDER = re.compile(r"<[a-z_]+>")


def accepted_values(docs: dict[str, catalog.TableDoc] | None = None
                    ) -> dict[tuple[str, str], list[str]]:
    """{(table, column): values} for every column whose description has a ``Values:`` list."""
    docs = catalog.dictionary() if docs is None else docs
    out: dict[tuple[str, str], list[str]] = {}
    for table, doc in docs.items():
        for column, (_, text) in doc.columns.items():
            listed = re.search(r"\bValues:(.*)$", text)
            if listed:
                out[(table, column)] = re.findall(r"`([^`]+)`", listed.group(1))
    return out


def pattern(values: list[str]) -> re.Pattern[str]:
    """One regular expression accepting exactly the listed values (placeholders: digits)."""
    parts = []
    for value in values:
        pieces = PLACEHOLDER.split(value)
        parts.append("[0-9]+".join(re.escape(p) for p in pieces))
    return re.compile("^(?:" + "|".join(parts) + ")$") if parts else re.compile(r"(?!)")


def violations(accepted: dict[tuple[str, str], list[str]],
               observed: dict[tuple[str, str], set[str]]) -> list[str]:
    """One line per observed value that docs/tables.md does not list for its column."""
    problems = []
    for (table, column), values in sorted(observed.items()):
        if (table, column) not in accepted:
            continue
        ok = pattern(accepted[(table, column)])
        for value in sorted(v for v in values if not ok.match(v)):
            problems.append(f"{table}.{column} = {value!r} is not among the values "
                            "docs/tables.md lists")
    return problems


def table_files(derived: Path) -> dict[str, list[Path]]:
    """Every output table of a run with its parquet files (all partitions)."""
    out = {}
    for folder in sorted(p for p in derived.iterdir() if p.is_dir()):
        files = sorted(folder.rglob("*.parquet"))
        if files:
            out[folder.name] = files
    return out


def observed_values(derived: Path, columns: set[tuple[str, str]] | None = None
                    ) -> tuple[dict[tuple[str, str], set[str]], dict[str, list[str]]]:
    """({(table, column): distinct non-NULL values as text}, {table: its columns}) of a run's
    parquet files, for the given (table, column) pairs (default: every decision column)."""
    con = duckdb.connect()
    values: dict[tuple[str, str], set[str]] = {}
    schemas: dict[str, list[str]] = {}
    for table, files in table_files(derived).items():
        rel = con.read_parquet([str(f) for f in files], hive_partitioning=True,
                               union_by_name=True)
        schemas[table] = list(rel.columns)
        for column in rel.columns:
            wanted = ((table, column) in columns if columns is not None
                      else bool(DECISION_COLUMN.match(column)))
            if not wanted:
                continue
            rows = rel.filter(f'"{column}" IS NOT NULL').select(
                f'"{column}"::VARCHAR AS value').distinct().fetchall()
            values[(table, column)] = {r[0] for r in rows}
    con.close()
    return values, schemas


@pytest.fixture(scope="module")
def demo_values(demo_run):
    accepted = accepted_values()
    wanted = set(accepted)
    observed, schemas = observed_values(demo_run.derived, None)
    listed, _ = observed_values(demo_run.derived, wanted)
    return accepted, {**observed, **listed}, schemas


def test_every_decision_column_lists_its_values(demo_values):
    accepted, _, schemas = demo_values
    missing = [f"{table}.{column}" for table, columns in sorted(schemas.items())
               for column in columns
               if DECISION_COLUMN.match(column) and (table, column) not in accepted]
    assert not missing, "docs/tables.md lists no `Values:` for: " + ", ".join(missing)


def test_demo_run_holds_only_the_listed_values(demo_values):
    accepted, observed, _ = demo_values
    # the run must exercise the lists: the main verdicts are there, with their unresolved
    for key in [("citation_existence", "verdict"), ("passage_checks", "verdict"),
                ("support_evidence", "verdict"), ("metadata_checks", "verdict"),
                ("omission_endpoints", "verdict"), ("support_labels", "verdict"),
                ("claim_checks", "verdict"), ("answer_checks", "verdict"),
                ("metrics", "verdict"), ("metrics", "margin")]:
        assert observed.get(key), f"the demo run has no {key[0]}.{key[1]} value"
    assert "unresolved" in observed[("citation_existence", "verdict")]
    problems = violations(accepted, observed)
    assert not problems, "\n".join(problems)


def test_a_value_missing_from_the_doc_fails(demo_values):
    accepted, observed, _ = demo_values
    key = ("citation_existence", "verdict")
    trimmed = {**accepted, key: [v for v in accepted[key] if v != "unresolved"]}
    assert violations(trimmed, observed) == [
        "citation_existence.verdict = 'unresolved' is not among the values docs/tables.md lists"]


def test_the_check_reads_lists_and_placeholders():
    docs = {"t": catalog.TableDoc("t", "", {
        "verdict": ("VARCHAR", "The verdict. Values: `pass`, `fail` (a failure)."),
        "reason": ("VARCHAR", "Why (`see` above). Values: `ok`, `http_<status>`."),
        "note": ("VARCHAR", "Free text, no list.")})}
    accepted = accepted_values(docs)
    assert accepted == {("t", "verdict"): ["pass", "fail"],
                        ("t", "reason"): ["ok", "http_<status>"]}
    observed = {("t", "verdict"): {"pass", "maybe"},
                ("t", "reason"): {"ok", "http_404", "http_abc", "see"},
                ("t", "note"): {"anything"}}
    assert violations(accepted, observed) == [
        "t.reason = 'http_abc' is not among the values docs/tables.md lists",
        "t.reason = 'see' is not among the values docs/tables.md lists",
        "t.verdict = 'maybe' is not among the values docs/tables.md lists"]
