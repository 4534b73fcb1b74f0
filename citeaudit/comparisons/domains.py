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
                      "NULL::VARCHAR AS verdict, "
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
    con = duck.connect(isolated=True)  # threads: an instance-wide setting
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


# how many domains the report and ``citeaudit domains`` list (the table holds every one)
TOP = 15
# how far back the earlier dates' citation counts are read
HISTORY_DAYS = 7


def _pct(rate: float | None, low: float | None, high: float | None) -> dict[str, str]:
    if rate is None:
        return {"text": "—", "ci": ""}
    return {"text": f"{100 * rate:.1f}%", "ci": f"[{100 * low:.1f}–{100 * high:.1f}]"}


def earlier(derived: Path, date: str, version: str, days: int = HISTORY_DAYS,
            engine: str = ALL) -> dict[str, dict[str, int]]:
    """{earlier date: {cited_domain: citations by ``engine``}} of the written partitions of
    the ``days`` days before ``date``, oldest first."""
    from citeaudit.comparisons.compute import window

    out: dict[str, dict[str, int]] = {}
    for d in window(date, days):
        table = read(derived, d, version)
        if table is not None:
            out[d] = {r["cited_domain"]: r["citations"] for r in
                      table.select(["engine", "cited_domain", "citations"]).to_pylist()
                      if r["engine"] == engine}
    return out


def view(table: pa.Table, history: dict[str, dict[str, int]] | None = None,
         top: int = TOP, engine: str = ALL) -> dict[str, Any]:
    """What the report and the terminal show of one ``cited_domains`` partition: the ``top``
    domains ``engine`` cites most (with each engine's count, the three rates and their
    intervals, the sources retrieved but not cited, the citations on earlier dates), and the
    domains retrieved but never cited."""
    rows = table.to_pylist()
    per_engine: dict[str, dict[str, int]] = {}
    for r in rows:
        if r["engine"] != ALL and r["citations"]:
            per_engine.setdefault(r["cited_domain"], {})[r["engine"]] = r["citations"]
    mine = [r for r in rows if r["engine"] == engine]
    cited = sorted((r for r in mine if r["citations"]),
                   key=lambda r: (-r["citations"], r["cited_domain"]))
    history = history or {}
    shown = []
    for r in cited[:top]:
        shown.append({
            **r,
            "by_engine": " · ".join(f"{e} {n}" for e, n in
                                    sorted(per_engine.get(r["cited_domain"], {}).items())),
            "dead_cell": _pct(r["dead_rate"], r["dead_ci_low"], r["dead_ci_high"]),
            "changed_cell": _pct(r["changed_rate"], r["changed_ci_low"], r["changed_ci_high"]),
            "unsupported_cell": _pct(r["unsupported_rate"], r["unsupported_ci_low"],
                                     r["unsupported_ci_high"]),
            "earlier": [history[d].get(r["cited_domain"], 0) for d in history],
        })
    never = sorted((r for r in mine if not r["citations"] and r["retrieved_not_cited"]),
                   key=lambda r: (-r["retrieved_not_cited"], r["cited_domain"]))
    return {"engine": engine, "rows": shown, "n_domains": len(cited),
            "n_citations": sum(r["citations"] for r in cited),
            "earlier_dates": list(history), "never_cited": never[:top],
            "n_never_cited": len(never),
            "retrieved_known": any(r["retrieved_not_cited"] for r in rows)}


def report_context(derived: Path, date: str, version: str) -> dict[str, Any] | None:
    """The report's "Cited domains" section (``report/templates/_domains.html.j2``); None when
    this date × codebook has no ``cited_domains`` partition or no cited domain."""
    table = read(derived, date, version)
    if table is None or table.num_rows == 0:
        return None
    return view(table, earlier(derived, date, version))
