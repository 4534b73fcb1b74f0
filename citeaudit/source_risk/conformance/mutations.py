"""The structural mutations of the source-risk audit specification's conformance suite
(docs/references.md#source-risk-audit): one function per defect type.

Each takes a sealed record and returns a mutated copy plus whether it must be resealed:
deliberate checksum and identity defects are not resealed (the stale digest is the defect);
every other mutation is resealed so a stale outer digest cannot mask the structural test.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from citeaudit.source_risk import contract


def _identity(r: dict) -> bool:
    r["query_id"] = r["query_id"] + "-other-query"
    return False


def _source_snapshot(r: dict) -> bool:
    r["source_snapshot"]["text"] = r["source_snapshot"]["text"] + " Updated later."
    return False


def _answer_snapshot(r: dict) -> bool:
    r["answer_snapshot"]["text"] = r["answer_snapshot"]["text"] + " Edited."
    return False


def _record(r: dict) -> bool:
    r["annotator_id"] = "someone-else"
    return False


def _codebook(r: dict) -> bool:
    del r["codebook_version"]
    return True


def _pipeline(r: dict) -> bool:
    del r["pipeline"]["config"]
    return True


def _nullable(r: dict) -> bool:
    r["predicates"]["I"] = "U"
    return True


def _dimensions(r: dict) -> bool:
    del r["dimensions"]["d_Q"]
    return True


def _missing_span(r: dict) -> bool:
    del r["evidence"]["A"]
    return True


def _invalid_span(r: dict) -> bool:
    r["evidence"]["I"]["end"] = len(r["source_snapshot"]["text"]) + 10
    return True


def _quote(r: dict) -> bool:
    quote = r["evidence"]["M"]["quote"]
    r["evidence"]["M"]["quote"] = quote[::-1]
    return True


def _weights(r: dict) -> bool:
    r["weights"] = {k: v * 2 for k, v in r["weights"].items()}
    return True


MUTATIONS: dict[str, Callable[[dict], bool]] = {
    "identity_mismatch": _identity,
    "source_snapshot_checksum": _source_snapshot,
    "answer_snapshot_checksum": _answer_snapshot,
    "record_checksum": _record,
    "missing_codebook": _codebook,
    "missing_pipeline_field": _pipeline,
    "invalid_nullable_label": _nullable,
    "inconsistent_dimensions": _dimensions,
    "missing_span": _missing_span,
    "invalid_span": _invalid_span,
    "mismatched_quote": _quote,
    "unnormalized_weights": _weights,
}
assert tuple(MUTATIONS) == contract.SEED_DEFECTS


def mutate(record: dict, defect: str) -> tuple[dict, bool]:
    """A mutated deep copy of ``record`` and whether it is to be resealed."""
    r = copy.deepcopy(record)
    return r, MUTATIONS[defect](r)
