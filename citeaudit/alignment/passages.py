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
          con: duckdb.DuckDBPyConnection | None = None, existence: pa.Table | None = None
          ) -> pa.Table:
    """The ``passage_checks`` table: one row per citation with a non-empty quote.

    ``existence`` (``citation_existence``): a citation L1 judged a soft-404 has no page text
    to look in (``unresolved``, reason ``soft_404``), never ``absent``."""
    con = con or duck.connect()
    con.register("citations", citations)
    con.register("aligned", aligned)
    con.register("texts", texts)
    con.register("existence", existence.select(["citation_id", "reason"])
                 if existence is not None else
                 pa.table({"citation_id": pa.array([], pa.string()),
                           "reason": pa.array([], pa.string())}))
    return duck.query(con, "alignment/check_passages")
