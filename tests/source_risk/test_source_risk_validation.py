"""Source-risk record validation, endpoint and policy (the source-risk audit specification,
docs/references.md) on real DuckDB SQL."""

from __future__ import annotations

import copy
import hashlib
import itertools

import pyarrow as pa
import pytest

from citeaudit import duck
from citeaudit.codebook import validate as validate_codebook
from citeaudit.demo_corpus.codebooks import codebook as demo_codebook
from citeaudit.source_risk import contract, endpoint
from citeaudit.source_risk.conformance import fixtures, mutations
from citeaudit.source_risk.digests import sha256_column


@pytest.fixture(scope="module")
def sealed() -> dict[tuple, dict]:
    states = list(itertools.product((0, 1), repeat=4)) + [(1, None, 1, 0)]
    recs = fixtures.seal([fixtures.fixture(tuple("U" if v is None else v for v in s))
                          for s in states])
    return dict(zip(states, recs, strict=True))


def _run(records: list[dict]):
    return fixtures.run(records)


def test_sealed_records_are_accepted(sealed) -> None:
    result = _run(list(sealed.values()))
    assert result.rejected.num_rows == 0
    assert result.records.num_rows == len(sealed)


@pytest.mark.parametrize("defect", contract.SEED_DEFECTS)
def test_each_seed_defect_is_rejected_with_its_type(sealed, defect) -> None:
    mutated, reseal = mutations.mutate(sealed[(1, 1, 1, 0)], defect)
    if reseal:
        mutated = fixtures.seal([mutated])[0]
    result = _run([mutated])
    assert result.records.num_rows == 0
    row = result.rejected.to_pylist()[0]
    assert row["reason"] == defect
    assert row["detail"] and row["raw"] and row["stage"] in contract.STAGES


@pytest.mark.parametrize("value", ["U", 0, "missing", "0", 2, 1.0, True])
def test_u_zero_and_missing_key_are_not_null(sealed, value) -> None:
    """Only JSON null is unresolved; "U", a missing key and other values are defects, and 0 is
    a resolved value that needs its evidence span."""
    rec = copy.deepcopy(sealed[(1, None, 1, 0)])
    if value == "missing":
        del rec["predicates"]["A"]
    else:
        rec["predicates"]["A"] = value
    result = _run(fixtures.seal([rec]))
    if value == 0:  # resolved, but the record carries no span for A
        assert result.rejected.column("reason").to_pylist() == ["missing_span"]
    else:
        assert result.rejected.column("reason").to_pylist() == ["invalid_nullable_label"]


def test_null_predicate_is_accepted_and_unresolved(sealed) -> None:
    result = _run([sealed[(1, None, 1, 0)]])
    assert result.rejected.num_rows == 0
    r = endpoint.resolve(duck.connect(), result.records).to_pylist()[0]
    assert r["A"] is None and r["r_o"] is None


def test_endpoint_three_valued_logic() -> None:
    """I=0 with D NULL: `I=1 AND ... AND D=0` is FALSE in SQL; R_O must still be NULL."""
    rows = list(itertools.product((0, 1, None), repeat=4))
    t = pa.table({k: pa.array([r[i] for r in rows], pa.int8())
                  for i, k in enumerate(contract.PREDICATES)})
    out = endpoint.resolve(duck.connect(), t).to_pylist()
    for r, o in zip(rows, out, strict=True):
        want = None if None in r else int(r == (1, 1, 1, 0))
        assert o["r_o"] == want, r


def _book(**policy):
    doc = demo_codebook("v1")
    doc["policy"].update(policy)
    return validate_codebook(doc, "test.yaml")


def _endpoints(sealed, states, book):
    result = _run([sealed[s] for s in states])
    rows = endpoint.endpoints(duck.connect(), result.records, book).to_pylist()
    return {(r["I"], r["A"], r["M"], r["D"]): r for r in rows}


def test_policy_actions(sealed) -> None:
    book = _book()
    got = _endpoints(sealed, [(1, 1, 1, 0), (1, None, 1, 0), (0, 0, 0, 1), (1, 1, 0, 0)], book)
    assert got[(1, 1, 1, 0)]["policy_action"] == "CONTEXTUALIZE"
    assert got[(1, None, 1, 0)]["policy_action"] == "REVIEW"
    assert got[(0, 0, 0, 1)]["policy_action"] == "PASS"
    # affiliate requires disclosure, I=1 and D=0, priority 0.5625 > 0.5: contextualize
    assert got[(1, 1, 0, 0)]["priority"] == pytest.approx(0.25 * (0.5 + 0.8 + 0.4 + 1.0))
    assert got[(1, 1, 0, 0)]["policy_action"] == "CONTEXTUALIZE"
    assert all(r["policy_action"] != "ABSTAIN" for r in got.values())


def test_abstain_only_by_explicit_rule(sealed) -> None:
    book = _book(abstain_rules=[{"name": "no_answer_on_omission", "r_o": 1}])
    got = _endpoints(sealed, [(1, 1, 1, 0), (1, None, 1, 0), (0, 0, 0, 1)], book)
    assert got[(1, 1, 1, 0)]["policy_action"] == "ABSTAIN"
    assert got[(1, 1, 1, 0)]["abstain_rule"] == "no_answer_on_omission"
    assert got[(1, None, 1, 0)]["policy_action"] == "REVIEW"  # unresolved never abstains
    assert got[(0, 0, 0, 1)]["policy_action"] == "PASS"


def test_unknown_abstain_rule_key_fails_closed() -> None:
    from citeaudit.codebook import CodebookError

    with pytest.raises(CodebookError, match="unknown key"):
        endpoint.abstain_rules(_book(abstain_rules=[{"when": "always"}]))


def test_priority_is_not_an_input_to_r_o(sealed) -> None:
    rec = copy.deepcopy(sealed[(0, 0, 0, 1)])
    rec["dimensions"] = {k: 1.0 for k in rec["dimensions"]}
    hi = _run(fixtures.seal([rec])).records
    lo = _run([sealed[(0, 0, 0, 1)]]).records
    con = duck.connect()
    assert endpoint.resolve(con, hi).column("r_o").to_pylist() == \
        endpoint.resolve(con, lo).column("r_o").to_pylist() == [0]


def test_pipeline_defects_and_lineage(sealed) -> None:
    base = sealed[(1, 1, 1, 0)]
    revision = copy.deepcopy(base)
    revision["annotator_id"] = "adjudicator"
    revision["parent_record"] = base["record_digest"]
    orphan = copy.deepcopy(base)
    orphan["annotator_id"] = "late"
    orphan["parent_record"] = "0" * 64
    records = [base, *fixtures.seal([revision, orphan]), base]
    lines = fixtures.lines_table(records, "x.jsonl")
    lines = pa.concat_tables([lines, pa.table({"file": ["x.jsonl"], "line": [99],
                                               "raw": ["{not json"]}, schema=lines.schema)])
    from citeaudit.source_risk import validate

    result = validate.validate(lines, fixtures.SETTINGS)
    defects = dict(zip(result.rejected.column("source_line").to_pylist(),
                       result.rejected.column("reason").to_pylist(), strict=True))
    assert defects == {3: "orphan_revision", 4: "duplicate_record", 99: "malformed_json"}
    ledger = {r["source_line"]: r for r in result.records.to_pylist()}
    assert ledger[2]["parent_record"] == base["record_digest"]
    assert ledger[2]["tuple_digest"] == ledger[1]["tuple_digest"]
    assert ledger[2]["record_digest"] != ledger[1]["record_digest"]
    current = endpoint.current(duck.connect(), result.records).to_pylist()
    assert [c["record_digest"] for c in current] == [ledger[2]["record_digest"]]


@pytest.mark.parametrize("values", [
    [None] * 5,                       # a column no record fills (skipped, not hashed)
    ["", None, "é ü", None, "abc"],   # an empty string is hashed; null stays null
])
def test_sha256_column_keeps_nulls(values) -> None:
    """Hex SHA-256 per value, null for null (never the digest of an empty string), also for
    a slice of a longer column (the vectors DuckDB hands ``sr_sha256``)."""
    want = [None if v is None else hashlib.sha256(v.encode()).hexdigest() for v in values]
    column = pa.array(["pad"] + values + ["pad"], pa.string()).slice(1, len(values))
    assert sha256_column(column).to_pylist() == want
    assert sha256_column(pa.array(values, pa.string())).to_pylist() == want
