"""The fail-closed citation verification (docs/references.md#fail-closed-verification), as SQL over
the ingestion tables.

An answer is verified only when every claim carries at least one citation and every citation
is well formed and (where the generator's context is known) was in that context. Anything else
rejects the answer, and a rejected answer is never counted as served.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from citeaudit import duck


def check(
    answers: pa.Table,
    claims: pa.Table,
    citations: pa.Table,
    con: duckdb.DuckDBPyConnection | None = None,
) -> tuple[pa.Table, pa.Table]:
    """Return (claim_checks, answer_checks) for one batch of accepted answers."""
    con = con or duck.connect()
    con.register("answers", answers)
    con.register("claims", claims)
    con.register("citations", citations)
    claim_checks = duck.query(con, "citations/check_claims")
    con.register("claim_checks", claim_checks)
    answer_checks = duck.query(con, "citations/check_answers")
    return claim_checks, answer_checks
