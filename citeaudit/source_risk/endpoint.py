"""Endpoint, priority and policy over the current records of the ledger (all in SQL).

R_O (``sql/source_risk/resolve_omission.sql``) reads only I, A, M, D. Priority and the policy
action (``score_endpoints.sql``) come after it and read the codebook: weights, the
contextualisation threshold, the roles that require disclosure and the explicit ABSTAIN rules.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from citeaudit import duck
from citeaudit.codebook import Codebook, CodebookError

RULE_KEYS = {"name", "r_o", "source_roles", "min_priority"}
RULES_SCHEMA = pa.schema([
    ("rule_index", pa.int32()), ("name", pa.string()), ("r_o", pa.int8()),
    ("source_roles", pa.list_(pa.string())), ("min_priority", pa.float64()),
])


def abstain_rules(book: Codebook) -> pa.Table:
    """The codebook's explicit ABSTAIN rules as a table; unknown keys fail closed.

    A rule is a mapping of conditions, all of which must hold for a resolved tuple:
    ``r_o`` (0 or 1), ``source_roles`` (list), ``min_priority`` (number); ``name`` labels it.
    """
    rows = []
    for i, rule in enumerate(book.policy.abstain_rules):
        where = f"{book.path}: policy.abstain_rules[{i}]"
        unknown = sorted(set(rule) - RULE_KEYS)
        if unknown:
            raise CodebookError(f"{where}: unknown key(s) {', '.join(unknown)}; "
                                f"allowed: {', '.join(sorted(RULE_KEYS))}")
        r_o = rule.get("r_o")
        if r_o is not None and r_o not in (0, 1):
            raise CodebookError(f"{where}.r_o: expected 0 or 1, got {r_o!r}")
        roles = rule.get("source_roles")
        if roles is not None and (not isinstance(roles, list)
                                  or not all(isinstance(r, str) for r in roles)):
            raise CodebookError(f"{where}.source_roles: expected a list of role names")
        low = rule.get("min_priority")
        if low is not None and (isinstance(low, bool) or not isinstance(low, int | float)):
            raise CodebookError(f"{where}.min_priority: expected a number")
        rows.append({"rule_index": i, "name": str(rule.get("name") or f"rule_{i}"),
                     "r_o": r_o, "source_roles": roles,
                     "min_priority": None if low is None else float(low)})
    return pa.Table.from_pylist(rows, schema=RULES_SCHEMA)


def resolve(con: duckdb.DuckDBPyConnection, tuples: pa.Table) -> pa.Table:
    """R_O for a table with I, A, M, D (NULL = unresolved); the other columns pass through."""
    con.register("sr_tuples", tuples)
    return duck.query(con, "source_risk/resolve_omission")


def current(con: duckdb.DuckDBPyConnection, ledger: pa.Table) -> pa.Table:
    """The current record per tuple of a ledger (leaves of the revision graph), in
    tuple_digest order (one row per tuple digest, so the order is total)."""
    con.register("sr_ledger", ledger)
    return duck.query(con, "source_risk/select_current_records").sort_by("tuple_digest")


# The ledger columns the current view, R_O, priority and policy read (not the canonical JSON).
ENDPOINT_INPUTS = ("tuple_digest", "record_digest", "parent_record", "annotated_at_text",
                   "query_id", "answer_id", "claim_id", "source_url", "canonical_url",
                   "source_role", "codebook_version", "annotator_id", "I", "A", "M", "D",
                   "dimensions", "weights", "validation_gate")


def endpoints(con: duckdb.DuckDBPyConnection, ledger: pa.Table, book: Codebook) -> pa.Table:
    """``omission_endpoints`` of a ledger under a codebook: one row per current tuple."""
    con.register("sr_ledger", ledger.select(list(ENDPOINT_INPUTS)))
    return endpoint_relation(con, book).to_arrow_table()


def endpoint_relation(con: duckdb.DuckDBPyConnection, book: Codebook) -> duckdb.DuckDBPyRelation:
    """``omission_endpoints`` of the ledger ``sr_ledger`` (a view or table with at least
    ENDPOINT_INPUTS) as a lazy relation, for the caller to stream or fetch. The steps between
    are views, so DuckDB runs current view -> R_O -> priority and policy as one query (its
    sorts spill past the connection's memory limit) and stores nothing in between."""
    for view, name in (("sr_tuples", "select_current_records"),
                       ("sr_resolved", "resolve_omission")):
        con.sql(duck.sql_text(f"source_risk/{name}")).create_view(view, replace=True)
    con.register("sr_rules", abstain_rules(book))
    disclose = sorted(r.name for r in book.source_roles.values() if r.requires_disclosure)
    text = duck.sql_text("source_risk/score_endpoints")
    return con.sql(text, params={
        "contextualize_above": book.policy.contextualize_above,
        "disclosure_roles": disclose,
    })


def claim_ledger(con: duckdb.DuckDBPyConnection, endpoint_rows: pa.Table) -> pa.Table:
    """Endpoint outputs gathered per (answer, claim), tuple-local."""
    con.register("sr_endpoints", endpoint_rows)
    return duck.query(con, "source_risk/summarize_claim_ledger")
