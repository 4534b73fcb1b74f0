"""Evidence locator: atoms, passage windows, BM25 + coverage + flags and signals (real DuckDB
SQL), the codebook sections, the support_evidence asset in the demo run and the ExpertQA
validation command."""

from __future__ import annotations

import hashlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from citeaudit import cli, codebook
from citeaudit.codebook import Atomization, CodebookError
from citeaudit.support import atoms, evidence, windows
from tests.support.reference_evidence import support_evidence

BASE = {"version": "t", "label_maps": {"s": {"yes": "fully_supported"}}, "source_roles": {},
        "priority_weights": {"w": 1.0}, "policy": {"contextualize_above": 0.5}}


def _book(**ev):
    return codebook.validate({**BASE, "evidence": ev} if ev else BASE, "t.yaml")


def test_atoms_split_sentences_and_verb_clauses_with_offsets():
    text = ("The plant opened in 2019, and it employs 450 people [1]. "
            "Johnson and Johnson makes it. Dr. Smith said so.")
    got = atoms.split(text, Atomization())
    assert [a.text for a in got] == ["The plant opened in 2019", "it employs 450 people [1].",
                                     "Johnson and Johnson makes it.", "Dr. Smith said so."]
    for a in got:
        assert text[a.start:a.end] == a.text
    assert "[1]" not in got[1].match_text
    one = atoms.split(text, Atomization(split_clauses=False))
    assert len(one) == 3


def test_windows_offsets_index_the_page():
    text = "First sentence here. Second one follows.\nThird line is a text node"
    t = windows.windows(pa.table({"payload_sha256": ["d"], "text": [text]}), 2)
    rows = t.to_pylist()
    assert len(rows) == 2
    for r in rows:
        assert text[r["passage_start"]:r["passage_end"]] == r["passage_text"]


PAGE = ("Acme Widgets Annual Report. The company sold 12,500 widgets in 2024, up from 9,000. "
        "Revenue reached $4.2 million. The factory in Ohio is not unionized. "
        "Customers praise the blue model.")
CLAIMS = {
    "supported": "Acme sold 12,500 widgets in 2024.",
    "paraphrase": "In 2024 the company's widget sales reached 12500.",
    "number": "Acme sold 15,000 widgets in 2024.",
    "negated": "The factory in Ohio is unionized.",
    "absent": "Penguins migrate across Antarctic glaciers each winter.",
    "nopage": "Acme sold 12,500 widgets in 2024.",
}
EXPECTED = {"supported": "evidence_located", "paraphrase": "evidence_located",
            "number": "mismatch_flagged", "negated": "mismatch_flagged",
            "absent": "no_evidence_in_page", "nopage": "unresolved"}


def _locate(book):
    digest = hashlib.sha256(PAGE.encode()).hexdigest()
    pairs = pa.Table.from_pylist([
        {"answer_id": "a", "claim_id": k, "citation_id": k + ":c", "url": "http://x/",
         "capture_time": None, "payload_sha256": None if k == "nopage" else digest,
         "unavailable_reason": "no_capture_in_window" if k == "nopage" else None,
         "engine": "e", "domain": "d"} for k in CLAIMS],
        schema=pa.schema([("answer_id", pa.string()), ("claim_id", pa.string()),
                          ("citation_id", pa.string()), ("url", pa.string()),
                          ("capture_time", pa.timestamp("us", tz="UTC")),
                          ("payload_sha256", pa.string()), ("unavailable_reason", pa.string()),
                          ("engine", pa.string()), ("domain", pa.string())]))
    claims = pa.table({"claim_id": list(CLAIMS), "text": list(CLAIMS.values())})
    texts = pa.table({"payload_sha256": [digest], "text": [PAGE]})
    return {r["claim_id"]: r for r in evidence.locate(pairs, claims, texts, book).to_pylist()}


def test_signals_of_planted_pairs():
    rows = _locate(_book())
    assert {k: r["verdict"] for k, r in rows.items()} == EXPECTED
    assert "number:15000" in rows["number"]["mismatch_terms"]
    assert "negation" in rows["negated"]["mismatch_kinds"]
    r = rows["supported"]
    assert PAGE[r["passage_start"]:r["passage_end"]] == r["passage_text"]
    assert "12,500" in r["passage_text"]
    assert rows["nopage"]["reason"] == "no_capture_in_window"
    assert rows["nopage"]["coverage"] is None  # unknown, never a negative score
    assert {r["grader"] for r in rows.values()} == {evidence.GRADER}


def test_thresholds_come_from_the_codebook():
    rows = _locate(_book(located_coverage=0.95, no_evidence_coverage=0.1))
    assert rows["paraphrase"]["verdict"] == "weak_evidence"


def test_codebook_sections_default_and_fail_closed():
    book = _book()
    assert book.evidence.located_coverage == 0.2 and book.atomization.version == "rules-1"
    with pytest.raises(CodebookError, match="evidence: unknown key"):
        _book(located=0.5)
    with pytest.raises(CodebookError, match="no_evidence_coverage"):
        _book(located_coverage=0.1, no_evidence_coverage=0.3)


def test_support_evidence_in_the_demo_run(demo_run):
    files = sorted(demo_run.derived.glob("support_evidence/*/*/data.parquet"))
    assert files, "support_evidence was not materialized"
    table = pa.concat_tables(pq.read_table(f) for f in files)
    signals = set(table.column("verdict").to_pylist())
    assert signals <= set(evidence.VERDICTS)
    assert "evidence_located" in signals and "unresolved" in signals
    for r in table.to_pylist()[:200]:
        if r["payload_sha256"] is None:
            assert r["verdict"] == "unresolved" and r["reason"]


def test_validate_grader_expertqa(corpora, capsys):
    """The held-out tables, and the locator grader (weights and cut set on the calibration
    half only): on the held-out decorative test its AUC is at least plain coverage's and,
    with 90% of the true Complete pairs passing, it flags more swapped citations than plain
    coverage does. One report, printed as the command prints it."""
    from citeaudit.support import cli as support_cli
    from citeaudit.support import validate

    path = corpora / "annotations" / "expertqa" / "domain_val.jsonl"
    book = codebook.validate({"version": "defaults", "label_maps": {"x": {"y": "unresolved"}},
                              "source_roles": {}, "priority_weights": {"w": 1.0},
                              "policy": {"contextualize_above": 0.5}}, "(defaults)")
    rep = validate.report(path, book)
    support_cli.print_report(rep)
    out = capsys.readouterr().out
    assert "held-out" in out and "| overall |" in out
    assert "Decorative citations" in out and "Expert labels" in out
    d = rep["decorative"]["overall"]
    assert d["auc_grader"][0] >= d["auc_coverage"][0]
    assert d["grader_swapped_flagged"][0] > d["baseline_swapped_flagged"][0]
    assert d["grader_true_passed"][0] >= 0.88
    assert rep["thresholds"]["grader_cut_for_90pct_pass"] == pytest.approx(0.296, abs=5e-4)
    assert cli.main(["validate-grader", "expertqa", str(path.with_name("missing"))]) == 2


def test_planted_evidence_pairs_get_their_signals(demo_run):
    cases = demo_run.truth["evidence_cases"]
    assert {c["case"] for c in cases} >= {"verbatim", "paraphrase", "number_changed",
                                          "qualification_dropped", "negated",
                                          "never_mentioned", "not_captured"}
    files = sorted(demo_run.derived.glob("support_evidence/*/codebook=v1/data.parquet"))
    table = pa.concat_tables(pq.read_table(f) for f in files)
    got = {(r["citation_id"]): r for r in table.to_pylist()
           if r["citation_id"].startswith("cit-ev-")}
    assert {c["citation_id"]: got[c["citation_id"]]["verdict"] for c in cases} == \
        {c["citation_id"]: c["verdict"] for c in cases}
    number = got["cit-ev-number_changed"]
    assert number["mismatch_terms"] == ["number:48000"]
    assert "31,000" in number["passage_text"] and number["capture_time"] is not None


def test_evidence_grader_confusion_in_agreement(demo_run):
    files = sorted(demo_run.derived.glob("annotation_agreement/*/codebook=v1/data.parquet"))
    rows = [r for f in files for r in pq.read_table(f).to_pylist()
            if r["statistic"] == "evidence_confusion"]
    assert rows, "no evidence_confusion rows in annotation_agreement"
    assert {r["annotator_a"] for r in rows} == {evidence.GRADER}
    assert {r["label_a"] for r in rows} <= set(evidence.VERDICTS)
    assert {r["stratum"] for r in rows} >= {"overall"}
    assert any(r["stratum"].startswith("engine=") for r in rows)
    # the grader's rows never become gold: support_labels' basis stays human/grader_only
    labels = pa.concat_tables(pq.read_table(f) for f in sorted(
        demo_run.derived.glob("support_labels/*/codebook=v1/data.parquet")))
    assert set(labels.column("basis").to_pylist()) <= {"human", "grader_only"}


def _demo_inputs(demo_run, part: dict):
    from citeaudit import parquet_io

    day = {"observation_date": part["observation_date"]}
    return [parquet_io.read_partition(demo_run.derived, name, where) for name, where in (
        ("claims", day), ("citations", day), ("answers", day), ("citation_captures", part),
        ("payload_texts", part))]


def test_page_batches_equal_the_whole_table(demo_run, tmp_path):
    """The bounded-memory path (page batches of a few pairs, spilled, sorted by DuckDB) gives
    the whole path's table, row for row, and the asset's file holds exactly that table."""
    f = sorted(demo_run.derived.glob("support_evidence/*/codebook=v1/data.parquet"))[0]
    part = dict(p.split("=", 1) for p in (f.parent.parent.name, f.parent.name))
    book = codebook.load_version(demo_run.raw, part["codebook"])
    inputs = _demo_inputs(demo_run, part)
    whole = support_evidence(*inputs, book)
    assert whole.num_rows > 0
    assert evidence.evidence_pairs(*inputs).num_rows > 3 * 60  # several page batches
    batches = list(evidence.support_evidence_batches(*inputs, book, tmp_path, batch_pairs=60))
    got = pa.Table.from_batches(batches)
    assert got.equals(whole)
    assert pq.read_table(f).equals(whole), f


def test_page_batches_keep_a_page_whole_and_unreadable_pairs_apart():
    keys = pa.chunked_array([["a", "a", "a", "b", "c", "c"], [None, None, None]])
    slices = evidence._batch_slices(keys, 2)
    assert slices == [(0, 3), (3, 6), (6, 8), (8, 9)]
    assert evidence._batch_slices(pa.array([], pa.string()), 5) == []
    assert evidence._batch_slices(keys, 100) == [(0, 9)]


def test_no_pairs_still_give_the_schema(tmp_path):
    from citeaudit import parquet_io

    empty = evidence.empty_evidence()
    pairs = pa.table({n: pa.array([], empty.schema.field(n).type if n in empty.schema.names
                                   else pa.string())
                      for n in ("answer_id", "claim_id", "citation_id", "url", "capture_time",
                                "payload_sha256", "unavailable_reason", "engine", "domain")})
    claims = pa.table({"claim_id": pa.array([], pa.string()), "text": pa.array([], pa.string())})
    texts = pa.table({"payload_sha256": pa.array([], pa.string()),
                      "text": pa.array([], pa.string())})
    batches = evidence.sorted_evidence(
        evidence.locate_by_page(pairs, claims, texts, _book()), tmp_path)
    path = parquet_io.write_partition_batches(batches, None, tmp_path, "support_evidence",
                                              {"observation_date": "2026-01-01"})
    got = pq.read_table(path)
    assert got.num_rows == 0 and got.schema.names == empty.schema.names
