"""Temporal alignment: every citation tied to the archived capture nearest its reference time.

The three-layer audit's L1 temporal alignment (docs/references.md#three-layer-audit; section
"Temporal alignment" of docs/architecture.md). The work is SQL (``sql/alignment/``) over Arrow
tables in one DuckDB connection; Python only drives it and keys URLs (SURT keying is per
distinct URL):

1. citation URLs are canonicalized (:mod:`citeaudit.alignment.canonical`), the reference time is
   ``retrieved_at`` else the answer's ``observed_at``, and the window comes from the codebook;
2. the captures of the crawl dates the windows touch are keyed the same way (only target URIs
   carrying tracking parameters are re-keyed; the index's SURT key is canonical otherwise);
3. hop 0 and each redirect hop are ASOF joins on both sides of the hop's time (nearest
   before, nearest after, nearer wins, inside the window), at most ``MAX_HOPS`` redirects,
   a key seen twice is a loop;
4. a final revisit is resolved to the response it refers to (WARC-Refers-To-Target-URI and
   -Date, also for another URI, else the payload digest), searched from the first crawl date.

5. where a browser rendered the final capture (``fetch.browser``), the payload read for text is
   the rendered DOM's record (``capture_fidelity`` ``rendered``).

The captures are read and keyed once per date; the citations are aligned in batches of whole
answers (:data:`BATCH_CITATIONS`, :func:`align_batches`), so the hop tables and the final join
hold a batch, not the day, and give the same rows as one pass over the day.

Capture-side problems (invalid date, truncated, digest mismatch, unreadable, revisit without
original) become reasons, never a silent pass.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from urllib.parse import urljoin

import duckdb
import pyarrow as pa

from citeaudit import duck, storage
from citeaudit.alignment.canonical import canonical_table, canonicalize
from citeaudit.archive.capture import RENDERED_URN
from citeaudit.archive.lookup import add_replay_column
from citeaudit.codebook import Codebook

MAX_HOPS = 5
# the columns :func:`align` reads of the citations and answers tables
CITATION_COLUMNS = ["answer_id", "claim_id", "citation_id", "url", "retrieved_at"]
ANSWER_COLUMNS = ["answer_id", "observed_at"]
CAPTURES = "captures"
CAPTURE_FOLDER = "crawl_date"

REDIRECT_KEYS_SCHEMA = pa.schema(
    [
        pa.field("target_uri", pa.string()),
        pa.field("redirect_location", pa.string()),
        pa.field("next_key", pa.string()),
        pa.field("location_error", pa.string()),
    ]
)


def tracking_regex(globs: Sequence[str]) -> str:
    """One RE2 pattern matching a query string that holds a parameter named by a glob."""
    alts = []
    for glob in globs:
        out = []
        for ch in glob.lower():
            if ch == "*":
                out.append("[^&=]*")
            elif ch == "?":
                out.append("[^&=]")
            else:
                out.append(re.escape(ch))
        alts.append("".join(out))
    if not alts:
        return "a^"  # matches nothing
    return "(?i)(^|&)(" + "|".join(alts) + ")(=|&|$)"


def capture_files(derived: Path, first: dt.date | None = None, last: dt.date | None = None
                  ) -> list[str]:
    """The captures partitions on disk whose crawl date lies in ``[first, last]``, sorted."""
    root = storage.path(derived) / CAPTURES
    out = []
    if not root.is_dir():
        return out
    for folder in sorted(root.glob(f"{CAPTURE_FOLDER}=*")):
        try:
            day = dt.date.fromisoformat(folder.name.split("=", 1)[1])
        except ValueError:
            continue
        if (first is None or day >= first) and (last is None or day <= last):
            data = folder / "data.parquet"
            if data.is_file():
                out.append(str(data))
    return out


def _redirect_keys(pairs: pa.Table, is_tracking: Callable[[str], bool]) -> pa.Table:
    rows: dict[str, list] = {n: [] for n in REDIRECT_KEYS_SCHEMA.names}
    for base, loc in zip(pairs.column("target_uri").to_pylist(),
                         pairs.column("redirect_location").to_pylist(), strict=True):
        try:
            target = urljoin(base, loc.strip())
        except ValueError:
            target = None
        c = canonicalize(target, is_tracking)
        rows["target_uri"].append(base)
        rows["redirect_location"].append(loc)
        rows["next_key"].append(c.key)
        rows["location_error"].append(c.error)
    return pa.table(rows, schema=REDIRECT_KEYS_SCHEMA)


def _window_dates(con: duckdb.DuckDBPyConnection, table: str
                  ) -> tuple[dt.date, dt.date] | None:
    """The crawl dates the windows of ``table`` touch (one day of slack each side)."""
    lo, hi = con.table(table).aggregate("min(window_start), max(window_end)").fetchall()[0]
    if lo is None or hi is None:
        return None
    # one day of slack each side: a record's WARC-Date may fall just past its folder's date
    return lo.date() - dt.timedelta(days=1), hi.date() + dt.timedelta(days=1)


def answer_batches(answer_ids: pa.ChunkedArray | pa.Array, size: int
                   ) -> list[tuple[str | None, str | None]]:
    """Inclusive ``(first, last)`` answer-id ranges over ``answer_ids`` (sorted, nulls last)
    of about ``size`` rows each, cut only where the answer changes, so an answer's citations
    stay in one batch; a range of nulls is ``(None, None)``."""
    import numpy as np
    import pyarrow.compute as pc

    arr = answer_ids.combine_chunks() if isinstance(answer_ids, pa.ChunkedArray) \
        else answer_ids
    valid = len(arr) - arr.null_count  # nulls sort last: the valid ids are a prefix
    out: list[tuple[str | None, str | None]] = []
    if valid:
        ids = arr.slice(0, valid)
        changed = pc.not_equal(ids.slice(1), ids.slice(0, valid - 1))
        starts = np.flatnonzero(np.concatenate(([True], changed.to_numpy(zero_copy_only=False))))
        cuts = [0]
        while cuts[-1] < valid:
            nxt = np.searchsorted(starts, cuts[-1] + max(1, size), side="left")
            cuts.append(int(starts[nxt]) if nxt < len(starts) else valid)
        out = [(ids[lo].as_py(), ids[hi - 1].as_py())
               for lo, hi in zip(cuts[:-1], cuts[1:], strict=True)]
    if valid < len(arr):
        out.append((None, None))
    return out


# Citations aligned per batch (cut between answers): the final join's and the hop tables'
# memory follow the batch, not the day; the captures are loaded once for every batch.
BATCH_CITATIONS = 32_768


def align(citations: pa.Table, answers: pa.Table, derived: Path, codebook: Codebook,
          *, con: duckdb.DuckDBPyConnection | None = None,
          capture_paths: list[str] | None = None, canon: pa.Table | None = None,
          replay_prefix: str | None = None) -> pa.Table:
    """The ``citation_captures`` table of one observation date (see the module docstring).

    ``replay_prefix`` (``<replay.base_url>/<collection>``) fills ``replay_url``, the final
    capture's pywb link; without it the column is NULL.

    ``capture_paths`` overrides the captures partitions read (benchmarks); by default the
    partitions under ``derived/captures`` whose crawl date the windows touch. ``canon``
    (url, canonical_url, canonical_key, url_error) replaces keying the cited URLs here.
    """
    batches = list(align_batches(citations, answers, derived, codebook, con=con,
                                 capture_paths=capture_paths, canon=canon,
                                 replay_prefix=replay_prefix))
    return pa.concat_tables(batches).combine_chunks()


def align_batches(citations: pa.Table, answers: pa.Table, derived: Path, codebook: Codebook,
                  *, con: duckdb.DuckDBPyConnection | None = None,
                  capture_paths: list[str] | None = None, canon: pa.Table | None = None,
                  replay_prefix: str | None = None,
                  batch_citations: int = BATCH_CITATIONS) -> Iterator[pa.Table]:
    """The rows of :func:`align`, in its order, as tables of about ``batch_citations``
    citations (whole answers; at least one table, possibly empty). Each citation's row
    depends only on the citation and the captures, so a batch aligns exactly as the whole day
    does; the captures are read and keyed once."""
    con = con or duck.connect()
    win = codebook.alignment_window
    con.register("citations", citations)
    con.register("answers", answers.select(["answer_id", "observed_at"]))
    if canon is None:
        canon = canonical_table(citations.column("url").to_pylist(),
                                codebook.is_tracking_param, strict=True)
    con.register("canon", canon)
    params = {"before_s": float(win.before_days) * 86400.0,
              "after_s": float(win.after_days) * 86400.0}
    duck.create_table(con, "all_cites", "alignment/select_citation_refs", params)
    con.unregister("canon")
    con.unregister("answers")
    span = _window_dates(con, "all_cites")
    if capture_paths is None:
        # later crawl dates too: L1 `changed` compares with the newest capture, whenever taken
        capture_paths = capture_files(derived, span[0], None) if span else []
        originals = capture_files(derived, None, span[1]) if span else []
    else:
        originals = capture_paths
    _load_captures(con, capture_paths, codebook)
    duck.create_table(con, "invalid_keys", "alignment/select_invalid_keys")
    duck.create_table(con, "rendered", "alignment/select_rendered_captures",
                      {"prefix": RENDERED_URN})
    # in answer order whatever the connection's preserve_insertion_order (nulls last)
    ids = con.table("all_cites").select("answer_id").order("answer_id ASC NULLS LAST") \
        .to_arrow_table().column("answer_id")
    ranges = answer_batches(ids, batch_citations) or [(None, None)]
    del ids
    for first, last in ranges:
        duck.create_table(con, "cites", "alignment/select_batch_cites",
                          {"first": first, "last": last, "nulls": first is None})
        table = _align_cites(con, codebook, originals)
        con.execute("DROP TABLE cites")
        yield add_replay_column(table, replay_prefix, "final_capture_time", "final_uri")


def _align_cites(con: duckdb.DuckDBPyConnection, codebook: Codebook, originals: list[str]
                 ) -> pa.Table:
    """The citation_captures rows of the citations in table ``cites`` (captures loaded)."""
    duck.execute(con, "alignment/create_hops")
    duck.create_table(con, "frontier", "alignment/select_first_frontier")
    for hop in range(MAX_HOPS + 1):
        if _count(con, "frontier") == 0:
            break
        duck.create_table(con, "matches", "alignment/select_hop_matches")
        pairs = duck.query(con, "alignment/select_redirect_locations")
        con.register("redirect_keys", _redirect_keys(pairs, codebook.is_tracking_param))
        duck.execute(con, "alignment/insert_hop_rows")
        con.unregister("redirect_keys")
        con.execute("DROP TABLE matches")
        con.execute("DROP TABLE frontier")
        duck.create_table(con, "frontier", "alignment/select_next_frontier",
                          {"hop": hop, "max_hops": MAX_HOPS})
    con.execute("DROP TABLE IF EXISTS frontier")
    duck.create_table(con, "later", "alignment/select_later_captures")
    duck.create_table(con, "details", "alignment/select_capture_details")
    _load_originals(con, originals)
    duck.create_table(con, "captured", "alignment/select_citation_captures",
                      {"max_hops": MAX_HOPS})
    # a page a browser rendered is read from its rendered DOM (capture_fidelity 'rendered')
    table = duck.query(con, "alignment/select_rendered_payloads", {"prefix": RENDERED_URN})
    for name in ("captured", "origs", "wanted", "details", "later", "hops"):
        con.execute(f"DROP TABLE IF EXISTS {name}")
    return table


def _count(con: duckdb.DuckDBPyConnection, table: str) -> int:
    return con.table(table).aggregate("count(*)").fetchall()[0][0]


def _load_captures(con: duckdb.DuckDBPyConnection, paths: list[str], codebook: Codebook
                   ) -> None:
    from citeaudit.archive.index import CAPTURE_SCHEMA

    if paths:
        con.read_parquet(paths, union_by_name=True).to_view("caps_raw")
    else:
        con.register("caps_raw", CAPTURE_SCHEMA.empty_table())
    uris = duck.query(con, "alignment/select_tracking_uris",
                      {"tracking_re": tracking_regex(codebook.tracking_params)})
    keyed = canonical_table(uris.column("target_uri").to_pylist(), codebook.is_tracking_param)
    con.register("capkeys", keyed.rename_columns(
        ["target_uri", "canonical_url", "canonical_key", "url_error"]))
    duck.create_table(con, "files", "alignment/select_capture_files")
    duck.create_table(con, "caps", "alignment/select_alignment_caps")
    duck.create_table(con, "slots", "alignment/select_alignment_slots")


def _load_originals(con: duckdb.DuckDBPyConnection, paths: list[str]) -> None:
    """Responses a final revisit may refer to (by digest or WARC-Refers-To-Target-URI)."""
    duck.create_table(con, "wanted", "alignment/select_revisit_wants")
    if paths and _count(con, "wanted"):
        duck.create_table(con, "origs", "alignment/select_capture_originals", {"files": paths})
    else:
        duck.create_table(con, "origs", "alignment/select_no_originals")


def existence(citation_captures: pa.Table, page_checks: pa.Table | None = None,
              con: duckdb.DuckDBPyConnection | None = None) -> pa.Table:
    """The ``citation_existence`` table (pass/dead/changed/unresolved with a reason).

    ``page_checks`` (:func:`citeaudit.alignment.soft404.page_checks`: walls and soft-404
    evidence per citation); without it no page is judged a wall or a soft-404."""
    from citeaudit.alignment.soft404 import PAGE_CHECKS_SCHEMA

    con = con or duck.connect()
    con.register("citation_captures", citation_captures)
    con.register("page_checks", page_checks if page_checks is not None
                 else PAGE_CHECKS_SCHEMA.empty_table())
    return duck.query(con, "alignment/classify_existence")


def probes_for(aligned: pa.Table, raw: Path) -> dict:
    """The soft-404 probes of the crawls whose fetched WARCs hold the aligned final captures
    (the fetch logs of those observation dates), per origin."""
    from citeaudit.alignment.soft404 import probes_from_log
    from citeaudit.archive.capture import read_logs
    from citeaudit.layout import FETCHED_WARC_RE

    dates = set()
    for f in set(aligned.column("final_file").to_pylist()) - {None}:
        m = FETCHED_WARC_RE.match(f.rsplit("/", 1)[-1])
        if m and not m.group(3):
            dates.add(m.group(1))
    out: dict = {}
    for d in sorted(dates):
        for origin, probes in probes_from_log(read_logs(raw, d), raw).items():
            out.setdefault(origin, []).extend(probes)
    return out
