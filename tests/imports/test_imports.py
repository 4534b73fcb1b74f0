"""`citeaudit import liu|expertqa` on the real files in ../shared/corpora/annotations, then the
whole pipeline (`citeaudit run`) on the imported folder: every source record and label arrives,
counted per label and per system against counts computed here from the raw files."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from citeaudit import cli
from citeaudit.imports.codebook import EXPERTQA, LIU2023, LIU2023_STATEMENT


@pytest.fixture(scope="module")
def sources(corpora: Path) -> tuple[Path, Path]:
    liu = corpora / "annotations" / "liu-verifiability" / "intrinsic_halls.json"
    eqa = corpora / "annotations" / "expertqa" / "domain_val.jsonl"
    for p in (liu, eqa):
        if not p.is_file():
            pytest.skip(f"{p} is absent")
    return liu, eqa


@pytest.fixture(scope="module")
def imported(sources, imported_run) -> tuple[Path, Path]:
    """Both files imported into one raw folder and run (the session's shared imported run,
    tests/conftest.py, which the metrics tests read too)."""
    return imported_run.raw, imported_run.derived


def sql(derived: Path, text: str) -> list[tuple]:
    con = duckdb.connect(str(derived / "catalog.duckdb"), read_only=True)
    try:
        return con.sql(text).fetchall()
    finally:
        con.close()


def liu_counts(path: Path) -> tuple[Counter, Counter, Counter, int]:
    records = json.loads(path.read_text(encoding="utf-8"))
    labels: Counter = Counter()
    whole: Counter = Counter()
    for r in records:
        for note in r["annotation"]["statement_to_annotation"].values():
            if note.get("statement_supported") is not None:
                whole[(r["system_name"], note["statement_supported"])] += 1
            for ca in note.get("citation_annotations") or []:
                labels[(r["system_name"], ca["citation_supports"])] += 1
    statements = sum(len(r["statements_to_citation_texts"]) for r in records)
    return labels, whole, Counter(r["system_name"] for r in records), statements


def expertqa_counts(path: Path) -> tuple[Counter, Counter, int]:
    labels: Counter = Counter()
    answers: Counter = Counter()
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            for system, ans in rec["answers"].items():
                answers[system] += 1
                for c in ans["claims"]:
                    labels[(system, c["support"])] += 1
    return labels, answers, sum(labels.values())


def test_liu_every_record_and_label_arrives(sources, imported) -> None:
    labels, whole, answers, statements = liu_counts(sources[0])
    raw, derived = imported
    assert set(k[1] for k in labels) <= set(LIU2023)
    assert set(k[1] for k in whole) <= set(LIU2023_STATEMENT)
    got = Counter({(e, lab): n for e, lab, n in sql(derived, """
        SELECT a.engine, j.raw_label, count(*) FROM support_judgments AS j
        JOIN answers AS a USING (answer_id) WHERE j.schema = 'liu2023' GROUP BY ALL""")})
    assert got == labels and sum(got.values()) == 445
    got_whole = Counter({(e, lab): n for e, lab, n in sql(derived, """
        SELECT a.engine, j.raw_label, count(*) FROM support_judgments AS j
        JOIN answers AS a USING (answer_id)
        WHERE j.schema = 'liu2023_statement' AND j.grain = 'claim' GROUP BY ALL""")})
    assert got_whole == whole and sum(got_whole.values()) == 292
    per_engine = Counter({e: n for e, n in sql(derived, """
        SELECT engine, count(*) FROM answers WHERE answer_id LIKE 'liu-%' GROUP BY ALL""")})
    assert per_engine == answers
    assert sql(derived, "SELECT count(*) FROM claims WHERE claim_id LIKE 'liu-%'")[0][0] \
        == statements
    # one annotator per item: the adjudicated label is the mapped label, per system
    for level, source, lmap in (("citation", labels, LIU2023),
                                ("claim", whole, LIU2023_STATEMENT)):
        mapped = Counter()
        for (engine, raw_label), n in source.items():
            mapped[(engine, lmap[raw_label])] += n
        adjudicated = Counter({(e, lab): n for e, lab, n in sql(derived, f"""
            SELECT engine, verdict, count(*) FROM support_labels
            WHERE answer_id LIKE 'liu-%' AND grain = '{level}' GROUP BY ALL""")})
        assert adjudicated == mapped


def test_expertqa_every_record_and_label_arrives(sources, imported) -> None:
    labels, answers, claims = expertqa_counts(sources[1])
    raw, derived = imported
    assert claims == 1174
    got = Counter({(e, lab): n for e, lab, n in sql(derived, """
        SELECT a.engine, j.raw_label, count(*) FROM support_judgments AS j
        JOIN answers AS a USING (answer_id) WHERE j.schema = 'expertqa' GROUP BY ALL""")})
    unlabeled = {k: n for k, n in labels.items() if k[1] is None}
    assert got == Counter({k: n for k, n in labels.items() if k[1] is not None})
    assert set(k[1] for k in got) <= set(EXPERTQA)
    # a claim the source left unlabeled is rejected visibly, never given a label
    rejected = sql(derived, """SELECT reason, field, count(*) FROM rejected_annotations
                               GROUP BY ALL""")
    assert rejected == [("missing_field", "label", sum(unlabeled.values()))]
    per_engine = Counter({e: n for e, n in sql(derived, """
        SELECT engine, count(*) FROM answers WHERE answer_id LIKE 'expertqa-%' GROUP BY ALL""")})
    assert per_engine == answers
    assert sql(derived, "SELECT count(*) FROM claims WHERE claim_id LIKE 'expertqa-%'")[0][0] \
        == claims
    levels = sql(derived, "SELECT DISTINCT grain FROM support_labels "
                          "WHERE answer_id LIKE 'expertqa-%'")
    assert levels == [("claim",)]


def test_real_data_agreement_is_reported_undefined_not_invented(imported) -> None:
    _, derived = imported
    rows = sql(derived, """SELECT value, n, note FROM annotation_agreement
                           WHERE stratum = 'overall' AND statistic = 'krippendorff_alpha'""")
    assert len(rows) == 2
    assert all(v is None and n == 0 and "two or more" in note for v, n, note in rows)


def test_import_is_deterministic(sources, tmp_path: Path) -> None:
    def tree(folder: Path) -> dict[str, str]:
        return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(folder.rglob("*")) if p.is_file()}

    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        assert cli.main(["import", "liu", str(sources[0]), "--out", str(out)]) == 0
    assert tree(a) == tree(b)


def test_liu_subset_caveats_are_recorded_and_shown_beside_the_numbers(imported) -> None:
    """The bundled Liu et al. file is a subset chosen for answers with a "supports but also
    refutes" citation: the import measures that, records it, and the report of its date shows
    it at the top and beside the paper's numbers; the raw check reads the folder."""
    from citeaudit.ingest import raw_check

    raw, derived = imported
    [doc] = [json.loads(p.read_text(encoding="utf-8"))
             for p in (raw / "import_caveats").glob("liu2023-*.json")]
    assert doc["dates"] == ["2023-03-01"] and doc["source"] == "intrinsic_halls.json"
    assert doc["caveats"][0].startswith("A selected subset, not a sample: every one of the 114")
    assert not [r for r in raw_check.ignored_inputs(raw).to_pylist()
                if r["path"].startswith("import_caveats")]
    [page] = (derived / "report" / "observation_date=2023-03-01").glob("codebook=*/index.html")
    html = page.read_text(encoding="utf-8")
    top = html[html.index('<div class="missing" id="caveats">'):html.index('id="headline"')]
    assert "A selected subset, not a sample" in top and "liu2023 · intrinsic_halls.json" in top
    papers = html[html.index('<section id="papers">'):html.index('<section id="rates">')]
    assert "These numbers come with the caveats at the top of the page." in papers


def test_worthiness_signal_measured_on_liu_labels(imported) -> None:
    """The rule-based worthiness grader against Liu et al.'s verification-worthiness labels:
    every statement it flags is labelled not worthy (no worthy statement flagged), and it finds
    most of those that are."""
    _, derived = imported
    rows = dict(sql(derived, """
        SELECT (k.worthiness_signal IS NOT NULL, c.verification_worthy), count(*)
        FROM claim_checks AS k JOIN claims AS c USING (answer_id, claim_id)
        WHERE k.answer_id LIKE 'liu-%' AND c.verification_worthy IS NOT NULL
        GROUP BY ALL"""))
    flagged_worthy = rows.get((True, True), 0)
    flagged_not = rows.get((True, False), 0)
    missed_not = rows.get((False, False), 0)
    print(f"worthiness signal on Liu et al.: flagged {flagged_not + flagged_worthy}, of which "
          f"not worthy {flagged_not}; not-worthy statements found {flagged_not} of "
          f"{flagged_not + missed_not}")
    assert flagged_worthy == 0 and rows[(False, True)] > 300
    assert flagged_not >= 8 and flagged_not / (flagged_not + missed_not) >= 0.6


def test_reimport_onto_another_date_says_which_date_it_emptied(tmp_path, capsys) -> None:
    """A response re-imported with another --observed-at moves its answers: the import names
    the date it left empty and what the next run does about it (removes its outputs)."""
    body = {"object": "chat.completion", "model": "gpt-4o-search-preview", "choices": [
        {"message": {"role": "assistant", "content": "Rates rose in May. (x.org)",
                     "annotations": [{"type": "url_citation", "url_citation": {
                         "start_index": 19, "end_index": 26, "url": "https://x.org/a"}}]}}]}
    src = tmp_path / "resp.json"
    src.write_text(json.dumps(body), encoding="utf-8")
    out = tmp_path / "raw"
    argv = ["import", "openai", str(src), "--out", str(out), "--observed-at"]
    assert cli.main([*argv, "2026-11-28T08:00:00Z"]) == 0
    first = capsys.readouterr().out
    assert json.loads(first.splitlines()[0])["dates_emptied"] == []
    assert "moved:" not in first
    assert cli.main([*argv, "2026-11-28T09:00:00Z"]) == 0  # the same date again: nothing moves
    assert "moved:" not in capsys.readouterr().out
    assert cli.main([*argv, "2026-11-30T08:00:00Z"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert json.loads(lines[0])["dates_emptied"] == ["2026-11-28"]
    assert ("moved: answers/2026-11-28/ holds no answer any more (re-imported onto another "
            "date); the next `citeaudit run` removes that date's outputs") in lines
    assert sorted(p.name for p in (out / "answers").iterdir()) == ["2026-11-30"]
