"""Run the source-risk specification's conformance suite (docs/references.md) against this
implementation and write its evidence files.

Outputs (under ``out``): ``fixtures.jsonl`` (the 81 sealed records), ``expected_states.csv``
(the oracle, written before anything is resolved), ``predictions.csv``, ``table2_baselines.csv``,
``ablations.csv``, ``evidence_removal.csv``, ``flip_pairs.csv``, ``mutations.csv`` (the mutation
log), ``table3_checks.csv`` and ``manifest.sha256`` (SHA-256 of every file). :func:`run_suite`
returns the counts; every one of them comes from running the validator and the R_O SQL.
"""

from __future__ import annotations

import copy
import csv
import hashlib
import itertools
import json
from pathlib import Path

import pyarrow as pa

from citeaudit import duck
from citeaudit.source_risk import contract, endpoint
from citeaudit.source_risk.conformance import baselines, fixtures, mutations, oracle
from citeaudit.source_risk.conformance.fixtures import STATES, U, state_label

D_Q_SWEEP = tuple(round(i / 10, 1) for i in range(11))
# Registered flip directions: turning I, A or M from 0 to 1 can only create an omission;
# turning D from 0 to 1 can only remove one.
DIRECTIONS = {"I": "create", "A": "create", "M": "create", "D": "remove"}


def _outcomes(records: list[dict], name: str) -> tuple[list[object], list[str | None], object]:
    """Run records through validation and R_O: per record the endpoint (1/0/"U", or None when
    rejected), the defect type (None when accepted), and the validation result."""
    result = fixtures.run(records, name)
    con = duck.connect()
    resolved = endpoint.resolve(con, result.records.select(["source_line", "I", "A", "M", "D"]))
    by_line = {ln: (U if r is None else r) for ln, r in zip(
        resolved.column("source_line").to_pylist(), resolved.column("r_o").to_pylist(),
        strict=True)}
    defects = dict(zip(result.rejected.column("source_line").to_pylist(),
                       result.rejected.column("reason").to_pylist(), strict=True))
    n = len(records)
    return ([by_line.get(i) for i in range(1, n + 1)],
            [defects.get(i) for i in range(1, n + 1)], result)


def _write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def _with(state: tuple, index: int, value: object) -> tuple:
    s = list(state)
    s[index] = value
    return tuple(s)


def run_suite(out: Path) -> dict:
    """Run every check, write the evidence files, return the counts."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    counts: dict = {}
    complete = [s for s in STATES if U not in s]
    incomplete = [s for s in STATES if U in s]

    # fixtures and the oracle, stored before the resolver runs
    base = fixtures.seal([fixtures.fixture(s) for s in STATES])
    with (out / "fixtures.jsonl").open("w", encoding="utf-8", newline="\n") as fh:
        for rec in base:
            fh.write(json.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n")
    expected = {s: oracle.expected(s) for s in STATES}
    _write_csv(out / "expected_states.csv", ["state", "I", "A", "M", "D", "expected"],
               [[state_label(s), *s, expected[s]] for s in STATES])

    pred_list, defects, _ = _outcomes(base, "fixtures.jsonl")
    pred = dict(zip(STATES, pred_list, strict=True))
    _write_csv(out / "predictions.csv", ["state", "expected", "predicted", "agree", "defect"],
               [[state_label(s), expected[s], pred[s], expected[s] == pred[s], d or ""]
                for s, d in zip(STATES, defects, strict=True)])
    counts["states"] = len(STATES)
    counts["accepted_fixtures"] = sum(p is not None for p in pred.values())
    counts["oracle_agreement"] = sum(pred[s] == expected[s] for s in STATES)
    counts["positives"] = sum(pred[s] == 1 for s in STATES)
    counts["negatives"] = sum(pred[s] == 0 for s in STATES)
    counts["unresolved"] = sum(pred[s] == U for s in STATES)
    counts["complete_states"] = len(complete)

    # Table II: baselines without and with the common guard
    table2 = [["reference_endpoint", "own", sum(pred[s] != expected[s] for s in complete),
               sum(pred[s] != U for s in incomplete), sum(pred[s] == U for s in STATES)]]
    for name, rule in baselines.BASELINES.items():
        for guard, fn in (("none", rule), ("common", baselines.guarded(rule))):
            outs = {s: fn(s, 1) for s in STATES}
            table2.append([name, guard, sum(outs[s] != expected[s] for s in complete),
                           sum(outs[s] != U for s in incomplete),
                           sum(outs[s] == U for s in STATES)])
    _write_csv(out / "table2_baselines.csv",
               ["method", "guard", "mismatches_on_complete", "resolutions_on_incomplete",
                "unresolved_outputs"], table2)
    counts["table2"] = {f"{r[0]}/{r[1]}": {"mismatches": r[2], "resolutions": r[3],
                                           "unresolved": r[4]} for r in table2}

    # Ablations: one requirement dropped, the completeness guard kept (SQL over the records)
    con = duck.connect()
    accepted = fixtures.run(base, "fixtures.jsonl").records
    ref_pos = sum(pred[s] == 1 for s in complete)
    ablations = []
    for pred_name, substitute in (("I", 1), ("A", 1), ("M", 1), ("D", 0)):
        col = accepted.column(pred_name).to_pylist()
        sub = pa.array([None if v is None else substitute for v in col], pa.int8())
        t = accepted.select(["query_id", "I", "A", "M", "D"])
        t = t.set_column(t.column_names.index(pred_name), pred_name, sub)
        r = endpoint.resolve(con, t)
        positives = sum(v == 1 for v in r.column("r_o").to_pylist())
        ablations.append([f"drop_{pred_name}", substitute, positives, positives - ref_pos])
    dq_pred, _, _ = _outcomes(fixtures.seal([fixtures.fixture(s, drop_dq=True)
                                             for s in STATES]), "no_dq.jsonl")
    dq_changed = sum(a != b for a, b in zip(dq_pred, pred_list, strict=True))
    ablations.append(["drop_d_Q", "", sum(v == 1 for v in dq_pred), dq_changed])
    _write_csv(out / "ablations.csv", ["ablation", "substitute", "positives_on_complete",
                                       "added_positives_or_changed"], ablations)
    counts["ablation_added_positives"] = {a[0]: a[3] for a in ablations[:4]}
    counts["drop_dq_changed"] = dq_changed
    counts["short_circuit_resolved"] = sum(baselines.short_circuit(s, 1) != U for s in STATES)
    counts["complete_case_resolved"] = sum(pred[s] != U for s in STATES)

    # Evidence removal: every observed predicate of every state replaced by U
    moves = [(s, k) for s in STATES for k in range(4) if s[k] != U]
    dest = []
    for s, k in moves:  # distinct queries: two removals may reach the same state
        rec = fixtures.fixture(_with(s, k, U))
        rec["query_id"] += f"-from-{state_label(s)}-{contract.PREDICATES[k]}"
        dest.append(rec)
    dest_pred, _, _ = _outcomes(fixtures.seal(dest), "removal.jsonl")
    _write_csv(out / "evidence_removal.csv", ["from", "removed", "to", "endpoint_from",
                                              "endpoint_to"],
               [[state_label(s), contract.PREDICATES[k], state_label(_with(s, k, U)), pred[s], d]
                for (s, k), d in zip(moves, dest_pred, strict=True)])
    counts["evidence_removal_transitions"] = len(moves)
    counts["evidence_removal_unresolved"] = sum(d == U for d in dest_pred)

    # Support toggles and the d_Q sweep: the endpoint must not move
    tog, _, _ = _outcomes(fixtures.seal([fixtures.fixture(s, support=0) for s in STATES]),
                          "support.jsonl")
    counts["support_toggles"] = len(tog)
    counts["support_toggles_unchanged"] = sum(a == b for a, b in zip(tog, pred_list, strict=True))
    sweep = [(s, v) for v in D_Q_SWEEP for s in STATES]
    sw, _, _ = _outcomes(fixtures.seal([fixtures.fixture(s, d_q=v) for s, v in sweep]),
                         "sweep.jsonl")
    counts["dq_sweep_checks"] = len(sw)
    counts["dq_sweep_unchanged"] = sum(p == pred[s] for (s, _), p in zip(sweep, sw, strict=True))

    # Flip pairs: one predicate 0 -> 1 with the other three fixed in {0, 1}
    flips = []
    for k, name in enumerate(contract.PREDICATES):
        for rest in itertools.product((0, 1), repeat=3):
            others = list(rest)
            s0 = tuple(others[:k] + [0] + others[k:])
            s1 = tuple(others[:k] + [1] + others[k:])
            a, b = pred[s0], pred[s1]
            ok = (b >= a) if DIRECTIONS[name] == "create" else (b <= a)
            flips.append([name, state_label(s0), state_label(s1), a, b, a != b, ok])
    _write_csv(out / "flip_pairs.csv", ["predicate", "state_0", "state_1", "endpoint_0",
                                        "endpoint_1", "changed", "registered_direction"], flips)
    counts["flip_pairs"] = len(flips)
    counts["flip_pairs_direction_ok"] = sum(f[6] for f in flips)
    d_changes = [f for f in flips if f[0] == "D" and f[5]]
    counts["d_flip_removals"] = len(d_changes)
    counts["d_flip_removal_states"] = [f[1] for f in d_changes]
    counts["d_flip_unchanged_negative"] = sum(1 for f in flips if f[0] == "D" and not f[5]
                                              and f[3] == 0)

    # Serialization and lineage round trips
    counts["round_trips"] = _round_trips(base)

    # Mutations: 12 seed defect types x 16 complete records
    sealed_complete = [r for r, s in zip(base, STATES, strict=True) if U not in s]
    mutated, log = [], []
    for defect in contract.SEED_DEFECTS:
        batch, reseal = [], []
        for rec in sealed_complete:
            m, again = mutations.mutate(rec, defect)
            batch.append(m)
            reseal.append(again)
        resealed = fixtures.seal([m for m, a in zip(batch, reseal, strict=True) if a])
        it = iter(resealed)
        for m, again in zip(batch, reseal, strict=True):
            mutated.append(next(it) if again else m)
            log.append([defect, m["query_id"], again])
    m_pred, m_defects, _ = _outcomes(mutated, "mutations.jsonl")
    rows = [[*entry, d or "", d is not None, d == entry[0]]
            for entry, d in zip(log, m_defects, strict=True)]
    _write_csv(out / "mutations.csv", ["intended_defect", "record", "resealed", "found_defect",
                                       "rejected", "expected_type"], rows)
    counts["mutations"] = len(rows)
    counts["mutations_rejected"] = sum(r[4] for r in rows)
    counts["mutations_expected_type"] = sum(r[5] for r in rows)
    counts["mutation_types"] = len({r[0] for r in rows})

    table3 = [
        ["oracle agreement", counts["oracle_agreement"], counts["states"]],
        ["evidence-removal transitions unresolved", counts["evidence_removal_unresolved"],
         counts["evidence_removal_transitions"]],
        ["support toggles unchanged", counts["support_toggles_unchanged"],
         counts["support_toggles"]],
        ["d_Q sweep checks unchanged", counts["dq_sweep_unchanged"], counts["dq_sweep_checks"]],
        ["flip pairs in registered direction", counts["flip_pairs_direction_ok"],
         counts["flip_pairs"]],
        ["serialization and lineage round trips", counts["round_trips"], counts["states"]],
        ["mutations rejected with the expected type", counts["mutations_expected_type"],
         counts["mutations"]],
    ]
    _write_csv(out / "table3_checks.csv", ["check", "passed", "total"], table3)
    counts["table3"] = {r[0]: [r[1], r[2]] for r in table3}
    (out / "counts.json").write_text(json.dumps(counts, indent=1, sort_keys=True) + "\n",
                                     encoding="utf-8")
    _manifest(out)
    return counts


def _round_trips(base: list[dict]) -> int:
    """Per state: canonical serialisation survives a parse and re-seal byte for byte, and a
    revision keeps the tuple digest, gets a new record digest, links to its parent and
    becomes current while the parent stays in the ledger unchanged."""
    revisions = []
    for rec in base:
        rev = copy.deepcopy(rec)
        rev["annotator_id"] = "conformance-reviser"
        rev["annotated_at"] = "2026-01-03T00:00:00Z"
        rev["parent_record"] = rec["record_digest"]
        revisions.append(rev)
    revisions = fixtures.seal(revisions)
    result = fixtures.run(base + revisions, "lineage.jsonl")
    ledger = {r["record_digest"]: r for r in result.records.to_pylist()}
    con = duck.connect()
    current = {r["tuple_digest"]: r["record_digest"]
               for r in endpoint.current(con, result.records).to_pylist()}
    again = fixtures.run([json.loads(ledger[r["record_digest"]]["record_json"])
                          | {"record_digest": r["record_digest"]}
                          for r in base if r["record_digest"] in ledger], "reparse.jsonl")
    reparsed = {r["record_digest"]: r["record_json"] for r in again.records.to_pylist()}
    ok = 0
    for rec, rev in zip(base, revisions, strict=True):
        parent, child = ledger.get(rec["record_digest"]), ledger.get(rev["record_digest"])
        if parent is None or child is None:
            continue
        stored = json.loads(parent["record_json"])
        expect = {k: v for k, v in rec.items() if k != "record_digest"}
        checks = (
            hashlib.sha256(parent["record_json"].encode()).hexdigest() == rec["record_digest"],
            reparsed.get(rec["record_digest"]) == parent["record_json"],
            _same(stored, expect),
            child["tuple_digest"] == parent["tuple_digest"] == rec["tuple_digest"],
            child["record_digest"] != parent["record_digest"],
            child["parent_record"] == parent["record_digest"],
            current.get(rec["tuple_digest"]) == rev["record_digest"],
        )
        ok += all(checks)
    return ok


def _same(stored: dict, given: dict) -> bool:
    """The stored canonical record holds every given field with the same value (the canonical
    form adds explicit nulls for optional fields the input left out)."""
    for key, value in given.items():
        got = stored.get(key)
        if isinstance(value, dict) and isinstance(got, dict):
            if not _same(got, value):
                return False
        elif got != value and not (isinstance(value, int | float) and got == float(value)):
            return False
    return True


def _manifest(out: Path) -> None:
    lines = []
    for path in sorted(out.iterdir()):
        if path.is_file() and path.name != "manifest.sha256":
            lines.append(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.name}")
    (out / "manifest.sha256").write_text("\n".join(lines) + "\n", encoding="utf-8")
