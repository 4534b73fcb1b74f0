"""Batched validation (bounded memory) gives exactly what one batch over all lines gives.

Lines are validated batch by batch; duplicates and parents are resolved afterwards over the key
table of every batch, so a parent after its child, a duplicate in a later batch or a parent
named by its raw-line or canonical-JSON digest must come out as in one batch. Checked on the
conformance records, on hypothesis-generated bad records and on the demo corpus; the streamed
line reader against the layout's reference reader.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citeaudit import layout
from citeaudit.codebook import load_version
from citeaudit.source_risk import audit, contract, lines, validate
from citeaudit.source_risk.conformance import fixtures, mutations
from citeaudit.source_risk.digests import canonical_json


@pytest.fixture(scope="module")
def sealed() -> list[dict]:
    states = list(itertools.product((0, 1), repeat=4)) + [(1, None, 1, 0), (None, 0, 1, None)]
    return fixtures.seal([fixtures.fixture(tuple("U" if v is None else v for v in s))
                          for s in states])


def _table(texts: list[str]) -> pa.Table:
    return pa.table({"file": ["b.jsonl"] * len(texts),
                     "line": pa.array(range(1, len(texts) + 1), pa.int64()),
                     "raw": texts}, schema=lines.LINES_SCHEMA)


def _same_in_batches(texts: list[str], sizes=(1, 2, 5)) -> validate.Validated:
    whole = validate.validate(_table(texts), fixtures.SETTINGS)
    for size in sizes:
        part = validate.validate(_table(texts), fixtures.SETTINGS, batch_rows=size)
        assert part.records.equals(whole.records), size
        assert part.rejected.equals(whole.rejected), size
        assert part.digests.equals(whole.digests), size
    return whole


def test_lineage_across_batches(sealed) -> None:
    """Children before parents, parents by each digest form, duplicates and orphans."""
    base, other = sealed[14], sealed[3]  # (1, 1, 1, 0) and (0, 0, 1, 1)
    base_line = json.dumps(base)
    by_record = dict(copy.deepcopy(base), annotator_id="by-record",
                     parent_record=base["record_digest"])
    by_line = dict(copy.deepcopy(base), annotator_id="by-line",
                   parent_record=hashlib.sha256(base_line.encode()).hexdigest())
    by_canon = dict(copy.deepcopy(base), annotator_id="by-canonical",
                    parent_record=hashlib.sha256(canonical_json(base)).hexdigest())
    wrong_tuple = dict(copy.deepcopy(other), annotator_id="wrong-tuple",
                       parent_record=base["record_digest"])
    orphan = dict(copy.deepcopy(base), annotator_id="orphan", parent_record="0" * 64)
    upper = dict(copy.deepcopy(base), annotator_id="upper",
                 parent_record=base["record_digest"].upper())
    children = fixtures.seal([by_record, by_line, by_canon, wrong_tuple, orphan, upper])
    texts = [json.dumps(r) for r in children] + [base_line, json.dumps(other), base_line,
                                                  "{not json", ""]
    whole = _same_in_batches(texts, sizes=(1, 3, 4))
    defects = dict(zip(whole.rejected.column("source_line").to_pylist(),
                       whole.rejected.column("reason").to_pylist(), strict=True))
    assert defects == {4: "revision_identity", 5: "orphan_revision", 6: "orphan_revision",
                       9: "duplicate_record", 10: "malformed_json", 11: "malformed_json"}
    ledger = {r["annotator_id"]: r for r in whole.records.to_pylist()}
    for name in ("by-record", "by-line", "by-canonical"):
        assert ledger[name]["parent_record"] == base["record_digest"], name
    assert ledger["fixture-annotator"]["source_line"] in (7, 8)


def test_conformance_mutations_in_batches(sealed) -> None:
    mutated = [mutations.mutate(record, defect) for record, defect
               in zip(itertools.cycle(sealed[:16]), contract.SEED_DEFECTS * 2)]
    resealed = iter(fixtures.seal([m for m, reseal in mutated if reseal]))  # one call: ~0.1 s each
    rows = [next(resealed) if reseal else m for m, reseal in mutated]
    whole = _same_in_batches([json.dumps(r) for r in rows + sealed], sizes=(7,))
    assert whole.rejected.column("reason").to_pylist() == list(contract.SEED_DEFECTS * 2)


JSON_VALUES = st.sampled_from([None, "U", 0, 1, 2, "0", 1.0, True, -1, "", "x", [], {}, [1],
                               {"a": 1}, 0.5, 1e300])
FIELDS = ("query_id", "answer_id", "source_url", "source_role", "codebook_version", "claim_id",
          "annotator_id", "parent_record", "tuple_digest", "record_digest", "rank", "support",
          "predicates", "evidence", "dimensions", "weights", "pipeline", "answer_snapshot",
          "source_snapshot", "query_sha256")
PATHS = (("predicates", "I"), ("predicates", "D"), ("evidence", "A"), ("evidence", "M"),
         ("dimensions", "d_Q"), ("weights", "d_H"), ("pipeline", "config"),
         ("source_snapshot", "text"), ("answer_snapshot", "sha256"))


@st.composite
def bad_lines(draw, sealed: list[dict]) -> list[str]:
    """A few sealed records, each possibly broken: fields dropped or set to odd JSON values,
    nested keys changed, a parent naming another line, a copy, or text that is not JSON."""
    out: list[str] = []
    texts: list[str] = []
    for _ in range(draw(st.integers(1, 7))):
        rec = copy.deepcopy(sealed[draw(st.integers(0, len(sealed) - 1))])
        for _ in range(draw(st.integers(0, 3))):
            kind = draw(st.integers(0, 4))
            if kind == 0:
                rec.pop(draw(st.sampled_from(FIELDS)), None)
            elif kind == 1:
                rec[draw(st.sampled_from(FIELDS))] = draw(JSON_VALUES)
            elif kind == 2:
                top, key = draw(st.sampled_from(PATHS))
                if isinstance(rec.get(top), dict):
                    rec[top][key] = draw(JSON_VALUES)
            elif kind == 3 and texts:
                rec["parent_record"] = hashlib.sha256(
                    draw(st.sampled_from(texts)).encode()).hexdigest()
            elif kind == 4:
                rec["annotator_id"] = draw(st.sampled_from(["r1", "r2"]))
        if draw(st.booleans()):
            rec = fixtures.seal([rec])[0] if isinstance(rec.get("answer_snapshot"), dict) \
                and isinstance(rec.get("source_snapshot"), dict) else rec
        text = json.dumps(rec)
        choice = draw(st.integers(0, 9))
        if choice == 0:
            text = text[: draw(st.integers(0, len(text) - 1))]
        elif choice == 1 and out:
            text = draw(st.sampled_from(out))
        out.append(text)
        texts.append(text)
    return out


@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_generated_bad_records_in_batches(sealed, data) -> None:
    texts = data.draw(bad_lines(sealed))
    whole = _same_in_batches(texts, sizes=(2,))
    assert whole.records.num_rows + whole.rejected.num_rows == len(texts)


def _written(raw: Path, derived: Path, date: str, book, tmp: Path, block: int) -> dict:
    out = {name: tmp / f"{name}.parquet" for name in audit.TABLES}
    (tmp / "work").mkdir()
    written = audit.run_into(raw, derived, date, book, out, tmp / "work", block_bytes=block)
    import pyarrow.parquet as pq

    return {"batches": written.seconds, **{n: pq.read_table(p) for n, p in out.items()}}


def test_demo_corpus_in_small_batches_equals_one_batch(demo_run, tmp_path: Path) -> None:
    """The demo's source-risk file cut into ~2 KB blocks (one or two lines a batch)."""
    date = demo_run.truth["dates"][0]
    book = load_version(demo_run.raw, "v1")
    (tmp_path / "one").mkdir()
    (tmp_path / "many").mkdir()
    one = _written(demo_run.raw, demo_run.derived, date, book, tmp_path / "one", 1 << 24)
    many = _written(demo_run.raw, demo_run.derived, date, book, tmp_path / "many", 2048)
    assert one["source_risk_records"].num_rows > 10 and one["rejected_records"].num_rows > 10
    for name in audit.TABLES:
        assert many[name].equals(one[name]), name


def _reference_lines(raw: Path, date: str, dated: dict[str, str]) -> list[tuple]:
    return layout.source_risk_lines(raw, date, dated)


def _streamed_lines(raw: Path, date: str, dated: dict[str, str], block: int) -> list[tuple]:
    table = pa.table({"answer_id": list(dated), "observation_date": list(dated.values())},
                     schema=lines.DATES_SCHEMA)
    out = []
    for batch in lines.dated_batches(raw, date, table, block_bytes=block):
        out.extend(zip(*(batch.column(c).to_pylist() for c in ("file", "line", "raw")),
                       strict=True))
    return out


def test_streamed_reader_equals_layout_reader(tmp_path: Path) -> None:
    """Blank and whitespace-only lines, CRLF, invalid UTF-8, no final newline, a line longer
    than the block, non-JSON, an answer id that is not a string, NaN (Python reads it)."""
    raw = tmp_path / "raw"
    folder = raw / "annotations" / "source_risk" / "team"
    folder.mkdir(parents=True)
    for day in ("2026-11-01", "2026-11-02"):
        (raw / "answers" / day).mkdir(parents=True)
    rows = [b'{"answer_id": "a1"}\r\n', b"\n", b"   \t\n", "\u3000\x1c\n".encode(),
            b'{"answer_id": "a2", "x": "\xff\xfe"}\n', b'{"answer_id": 5}\n',
            b'{"answer_id": "a2", "v": NaN}\n', b"[1, 2]\n", b"{bad\n",
            b'{"answer_id": "a2", "long": "' + b"y" * 5000 + b'"}\n', b"\r\r\n",
            b'{"answer_id": "nobody"}\n', b'  {"answer_id": "a1"}  \n', b'{"answer_id": "a2"}']
    (folder / "risk.jsonl").write_bytes(b"".join(rows))
    (raw / "annotations" / "source_risk" / "2026-11-02.jsonl").write_bytes(
        b'{"answer_id": "nobody"}\n\n{"answer_id": "a1"}\n')
    dated = {"a1": "2026-11-01", "a2": "2026-11-02"}
    for date in dated.values():
        want = _reference_lines(raw, date, dated)
        assert want
        for block in (7, 100, 1 << 20):
            assert _streamed_lines(raw, date, dated, block) == want, (date, block)


def test_streamed_reader_on_the_demo(demo_run) -> None:
    dated = audit.answer_dates(demo_run.derived).to_pylist()
    by_id = {r["answer_id"]: r["observation_date"] for r in dated}
    for date in demo_run.truth["dates"]:
        want = _reference_lines(demo_run.raw, date, by_id)
        assert want and _streamed_lines(demo_run.raw, date, by_id, 4096) == want, date


def test_batch_file_out_of_order_fails_loudly(sealed) -> None:
    """A batch's ledger rows are read back beside their lineage by position: a batch file
    whose rows are not in file and line order raises instead of mixing up the rows."""
    ledger = validate.run([_table([json.dumps(r) for r in sealed[:4]])], fixtures.SETTINGS)
    try:
        spool = ledger.work / "spool" / "000000.arrow"
        shuffled = validate.read_spool(spool).take([1, 0, 2, 3])  # a copy, not the mapping
        assert shuffled.num_rows == 4
        validate.write_spool(shuffled, spool)
        with pytest.raises(RuntimeError, match="not aligned by line"):
            ledger.records().read_all()
    finally:
        ledger.close()


def test_lines_out_of_order_come_out_in_line_order(sealed) -> None:
    """The batch statement keeps its input's order (no sort in SQL); a batch handed over in
    another order is sorted (file, line) before it is kept, so the ledger and the
    rejections are those of the ordered batch, row for row (as the sort in SQL gave)."""
    texts = [json.dumps(r) for r in sealed] + ["{not json", json.dumps(sealed[0])]
    ordered = _table(texts)
    backwards = ordered.take(pa.array(range(ordered.num_rows - 1, -1, -1)))
    assert validate.in_line_order(ordered)
    assert not validate.in_line_order(backwards)
    whole = validate.validate(ordered, fixtures.SETTINGS)
    got = validate.validate(backwards, fixtures.SETTINGS)
    assert got.records.equals(whole.records)
    assert got.rejected.equals(whole.rejected)
    assert whole.rejected.num_rows == 2  # the malformed line and the duplicate


def test_batches_side_by_side_equal_one_at_a_time(sealed) -> None:
    """Batches validated by several workers at once (each on its own cursor, finishing in any
    order) give the rows, rejections and digests of one worker taking them in turn: the key
    tables are kept in batch order, lineage across batches included."""
    base = sealed[14]
    child = dict(copy.deepcopy(base), annotator_id="child", parent_record=base["record_digest"])
    texts = ([json.dumps(child)] + [json.dumps(r) for r in sealed] + ["{not json"]
             + [json.dumps(base), json.dumps(sealed[3])])
    one = validate.validate(_table(texts), fixtures.SETTINGS, batch_rows=4, workers=1)
    assert one.records.num_rows and one.rejected.num_rows
    for workers in (2,):
        got = validate.validate(_table(texts), fixtures.SETTINGS, batch_rows=4,
                                workers=workers)
        assert got.records.equals(one.records), workers
        assert got.rejected.equals(one.rejected), workers
        assert got.digests.equals(one.digests), workers
