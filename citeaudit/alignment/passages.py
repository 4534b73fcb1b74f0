"""L2 mechanical passage checks: is the cited quote in the aligned capture's text, and where.

The statuses (``located``, ``shifted``, ``normalized``, ``absent``, ``unresolved``) and the
matching rules are in ``sql/alignment/check_passages.sql``; this module only runs it. A citation
without usable text is ``unresolved`` with a reason, never ``absent``.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from citeaudit import duck


def check(citations: pa.Table, aligned: pa.Table, texts: pa.Table,
          con: duckdb.DuckDBPyConnection | None = None) -> pa.Table:
    """The ``passage_checks`` table: one row per citation with a non-empty quote."""
    con = con or duck.connect()
    con.register("citations", citations)
    con.register("aligned", aligned)
    con.register("texts", texts)
    return duck.query(con, "alignment/check_passages")
