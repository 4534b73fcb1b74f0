"""The ``cited_domains`` table: which sites the engines cite, and how those citations fare.

Per engine (and ``all`` engines) and cited domain (the registrable domain of the cited URL,
``www.bbc.co.uk`` → ``bbc.co.uk``, a DOI link under ``doi.org``) on one date × codebook: the
citations, answers and queries citing it; the dead and changed rates over its citations with a
resolved L1 verdict; the unsupported rate over its claim-citation pairs with a resolved human
support label; and the sources the engines retrieved on that domain but no claim cited (the
engine imports keep them in ``answers.retrieved_not_cited``; a domain only retrieved has a row
with 0 citations). Unresolved units are counted beside each rate, never inside.

The rates are the share of the citations observed in this panel (unweighted: what the engines
cited), each with a Wilson interval on Kish's effective size over queries, ``(Σ m_g)² / Σ m_g²``
with ``m_g`` a query's resolved citations of the domain: the citations of one query move
together (the same page cited twice is dead twice), so a query counts about once, never its
citations one by one. Over time: each date is a partition; the report and
``citeaudit domains`` read earlier dates beside this one.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pyarrow as pa

from citeaudit import duck, parquet_io
from citeaudit.metrics import inputs
from citeaudit.stats import wilson_bounds

TABLE = "cited_domains"
ALL = "all"
METHOD = "wilson_query_clusters"
RATES = ("dead", "changed", "unsupported")

SCHEMA = pa.schema(
    [
        ("engine", pa.string()),
        ("cited_domain", pa.string()),
        ("citations", pa.int64()),
        ("answers", pa.int64()),
        ("queries", pa.int64()),
        ("existence_resolved", pa.int64()),
        ("existence_unresolved", pa.int64()),
        ("dead", pa.int64()),
        ("dead_rate", pa.float64()),
        ("dead_ci_low", pa.float64()),
        ("dead_ci_high", pa.float64()),
        ("changed", pa.int64()),
        ("changed_rate", pa.float64()),
        ("changed_ci_low", pa.float64()),
        ("changed_ci_high", pa.float64()),
        ("support_resolved", pa.int64()),
        ("support_unresolved", pa.int64()),
        ("unsupported", pa.int64()),
        ("unsupported_rate", pa.float64()),
        ("unsupported_ci_low", pa.float64()),
        ("unsupported_ci_high", pa.float64()),
        ("retrieved_not_cited", pa.int64()),
        ("method", pa.string()),
    ]
)

# the columns each input must have; an input not materialized is registered empty, so its
# rates are unresolved (no resolved unit), never 0
_EMPTY = {
    "citation_existence": "SELECT NULL::VARCHAR AS citation_id, NULL::VARCHAR AS verdict "
                          "WHERE false",
    "support_labels": "SELECT NULL::VARCHAR AS claim_id, NULL::VARCHAR AS citation_id, "
                      "NULL::VARCHAR AS grain, NULL::VARCHAR AS verdict, "
                      "NULL::VARCHAR AS basis WHERE false",
}


@cache
def _extractor() -> Any:
    import tldextract

    # the snapshot bundled with tldextract: never fetch the public suffix list at run time
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None,
                                 include_psl_private_domains=True)


def cited_domain(url: str | None) -> str | None:
    """The registrable domain of a URL (``https://www.bbc.co.uk/x`` → ``bbc.co.uk``); a host
    the public suffix list does not know (``.example``): its last two labels; an IP address
    as is; None without an http(s) host."""
    if not url:
        return None
    try:
        parts = urlsplit(str(url))
        host = (parts.hostname or "").lower().rstrip(".")
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not host:
        return None
    ext = _extractor()(host)
    if ext.ipv4 or ":" in host:
        return host
    return ext.top_domain_under_public_suffix or ".".join(host.split(".")[-2:])


def _url_domains(urls: list[str | None]) -> pa.Table:
    unique = sorted({u for u in urls if u})
    domains = [cited_domain(u) for u in unique]
    keep = [i for i, d in enumerate(domains) if d]
    return pa.table({"url": [unique[i] for i in keep], "cited_domain": [domains[i] for i in keep]},
                    schema=pa.schema([("url", pa.string()), ("cited_domain", pa.string())]))


def _intervals(table: pa.Table) -> pa.Table:
    """Add each rate and its Wilson bounds on the Kish effective size over queries."""
    cols = {name: table.column(name) for name in table.column_names}
    out: dict[str, Any] = {}
    for rate, n_col, kish_col in (("dead", "existence_resolved", "existence_kish"),
                                  ("changed", "existence_resolved", "existence_kish"),
                                  ("unsupported", "support_resolved", "support_kish")):
        k = cols[rate].to_numpy(zero_copy_only=False).astype(np.float64)
        n = cols[n_col].to_numpy(zero_copy_only=False).astype(np.float64)
        kish = np.nan_to_num(cols[kish_col].to_numpy(zero_copy_only=False).astype(np.float64))
        has = n > 0
        p = np.where(has, k / np.where(has, n, 1.0), np.nan)
        low = np.full(n.shape, np.nan)
        high = np.full(n.shape, np.nan)
        if has.any():
            size = kish[has]
            low[has], high[has] = wilson_bounds(p[has] * size, size)
        out[f"{rate}_rate"] = pa.array(p, mask=~has)
        out[f"{rate}_ci_low"] = pa.array(low, mask=~has)
        out[f"{rate}_ci_high"] = pa.array(high, mask=~has)
    rows = {name: out.get(name, cols.get(name)) for name in SCHEMA.names if name != "method"}
    rows["method"] = pa.array([METHOD] * table.num_rows, pa.string())
    return pa.table(rows).cast(SCHEMA)


def cited_domains(derived: Path, date: str, version: str) -> pa.Table:
    """The ``cited_domains`` rows of one date × codebook, from the tables on disk (answers and
    citations must be there; L1 and support labels may be absent: their rates unresolved)."""
    tables = inputs.available(derived, date, version)
    missing = [t for t in ("answers", "citations") if t not in tables]
    if missing:
        raise FileNotFoundError(f"cited_domains of {date} × {version}: {', '.join(missing)} "
                                f"not materialized: run citeaudit run --date {date}")
    con = duck.connect()
    try:
        con.execute("SET threads = 1")  # sums in one order: a rerun writes the same bytes
        answers = con.read_parquet(str(tables["answers"]))
        if "retrieved_not_cited" not in answers.columns:
            # answers written before the column existed: nothing retrieved is known
            answers = answers.project("*, NULL::VARCHAR[] AS retrieved_not_cited")
        answers.create_view("answers")
        con.read_parquet(str(tables["citations"])).create_view("citations")
        for name, empty in _EMPTY.items():
            if name in tables:
                rel = con.read_parquet(str(tables[name]))
                if name == "support_labels" and "basis" not in rel.columns:
                    rel = rel.project("*, 'human' AS basis")
                rel.create_view(name)
            else:
                con.sql(empty).create_view(name)
        urls = con.sql("SELECT url FROM citations UNION SELECT unnest(retrieved_not_cited) "
                       "FROM answers").fetchall()
        con.register("url_domains", _url_domains([u for (u,) in urls]))
        duck.create_table(con, "domain_units", "comparisons/select_domain_units")
        duck.create_table(con, "retrieved_units", "comparisons/select_retrieved_units")
        table = duck.query(con, "comparisons/select_domain_metrics")
    finally:
        con.close()
    return _intervals(table)


def read(derived: Path, date: str, version: str) -> pa.Table | None:
    """The written ``cited_domains`` of one date × codebook; None when not materialized."""
    return parquet_io.read_optional(derived, TABLE, {"observation_date": date,
                                                     "codebook": version})
