"""The evidence locator: where the archived page says what each atom of a claim says.

For every cited (claim, citation) pair with a readable archived page (``payload_texts`` through
``citation_captures``), every atom of the claim (``citeaudit.support.atoms``) is scored against
the page's passage windows (``citeaudit.support.windows``) with BM25 in SQL over a term table
(``sql/support/score_atom_passages.sql``: the page's windows are the collection), and the best
passage is checked for what it visibly does not say (``select_support_evidence.sql``). The
locator's ``verdict`` is a grader's signal that orders human review; it is never a support
label (never gold), and the rows are a grader's:

- ``unresolved``: no readable capture (the page unavailable; its cause in ``reason``),
  never negative;
- ``no_evidence_in_page``: no passage shares enough of the atom's content terms
  (coverage below ``evidence.no_evidence_coverage``);
- ``mismatch_flagged``: a number, percentage, date, currency amount, quoted string or
  capitalized name of the atom is in none of the top passages, or one side only is negated;
- ``weak_evidence``: coverage below ``evidence.located_coverage`` (or no content term);
- ``evidence_located``: otherwise.

``evidence_score`` is the coverage, minus 1 when a hard mismatch is flagged, so every flagged
pair ranks below every unflagged one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from citeaudit import duck
from citeaudit.codebook import Codebook
from citeaudit.support import atoms as atoms_mod
from citeaudit.support import windows as windows_mod

GRADER = "citeaudit-evidence-locator"
GRADER_VERSION = "1.0"
# the locator's verdicts (support_evidence.verdict): a grader's signal, never gold
VERDICTS = ("mismatch_flagged", "no_evidence_in_page", "weak_evidence", "evidence_located",
            "unresolved")
STOPWORDS = tuple(sorted(set("""
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had
has have having he her here hers herself him himself his how i if in into is it its itself just
me more most my myself of off on once only or other our ours ourselves out over own same she
should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why will with
would you your yours yourself yourselves however thus therefore may might must shall one ones
many much well often usually generally also like including include includes such via per
""".split()) - {"no", "not", "nor"}))  # noqa: SIM905


def _params(book: Codebook) -> dict:
    ev = book.evidence
    return {"stopwords": list(STOPWORDS), "k1": ev.bm25_k1, "b": ev.bm25_b, "top_k": ev.top_k,
            "located": ev.located_coverage, "no_evidence": ev.no_evidence_coverage,
            "flag_names": ev.flag_names, "grader": GRADER,
            "grader_version": f"{GRADER_VERSION}+{book.atomization.version}"}


BATCH_PAIRS = 8_000
SORT_MEMORY = "256MB"
READ_ROWS = 16_384
# Memory per page and per batch (docs/limits.md). Scoring a page costs about 30 bytes of
# windows and terms per character of its text, so a page is scored only up to
# MAX_PAGE_TEXT_CHARS (real pages hold well under 1M characters; a longer one is a pair
# ``unresolved`` with reason ``page_text_too_large``, never a negative finding from part of a
# page), and a batch holds pages of at most BATCH_TEXT_CHARS characters in all (one page over
# it is a batch of its own): a 256 MB page then costs no more than a capped one.
MAX_PAGE_TEXT_CHARS = 2_000_000
BATCH_TEXT_CHARS = 8_000_000
PAGE_TOO_LARGE = "page_text_too_large"


def cap_pages(pairs: pa.Table, texts: pa.Table, limit: int | None = None) -> pa.Table:
    """``pairs`` with every pair whose page text is longer than ``limit`` characters
    (:data:`MAX_PAGE_TEXT_CHARS` by default) made unavailable (no payload, reason
    :data:`PAGE_TOO_LARGE`), so its page is never windowed."""
    limit = MAX_PAGE_TEXT_CHARS if limit is None else limit
    if texts.num_rows == 0 or pairs.num_rows == 0:
        return pairs
    lengths = pc.fill_null(pc.utf8_length(texts.column("text")), 0)
    big = pc.unique(texts.filter(pc.greater(lengths, limit)).column("payload_sha256"))
    if len(big) == 0:
        return pairs
    hit = pc.fill_null(pc.is_in(pairs.column("payload_sha256"), value_set=big), False)
    i = pairs.schema.get_field_index("payload_sha256")
    j = pairs.schema.get_field_index("unavailable_reason")
    pairs = pairs.set_column(i, pairs.schema.field(i), pc.if_else(
        hit, pa.scalar(None, pairs.schema.field(i).type), pairs.column(i)))
    return pairs.set_column(j, pairs.schema.field(j), pc.if_else(
        hit, pa.scalar(PAGE_TOO_LARGE, pairs.schema.field(j).type), pairs.column(j)))


def _batch_slices(keys: pa.ChunkedArray | pa.Array, size: int,
                  chars: dict[str, int] | None = None,
                  budget: int | None = None) -> list[tuple[int, int]]:
    """[start, end) row ranges of about ``size`` rows over rows sorted by ``keys``, each cut
    where the key changes (a page's pairs stay in one batch; a null key is its own group).
    With ``chars`` (page key -> text length), a range also ends before its pages' text would
    pass ``budget`` characters (:data:`BATCH_TEXT_CHARS` by default; a page longer than that
    is a range of its own)."""
    budget = BATCH_TEXT_CHARS if budget is None else budget
    n = len(keys)
    if n == 0:
        return []
    arr = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
    changed = pc.fill_null(pc.not_equal(arr.slice(1), arr.slice(0, n - 1)), True)
    starts = np.flatnonzero(np.concatenate(([True], changed.to_numpy(zero_copy_only=False))))
    if chars:
        ends = np.append(starts[1:], n)
        page_keys = arr.take(pa.array(starts)).to_pylist()
        cuts, rows, text = [0], 0, 0
        for start, end, key in zip(starts, ends, page_keys, strict=True):
            weight = chars.get(key, 0) if key is not None else 0
            if start > cuts[-1] and (rows + (end - start) > size or text + weight > budget):
                cuts.append(int(start))
                rows, text = 0, 0
            rows, text = rows + int(end - start), text + weight
        cuts.append(n)
        return list(zip(cuts[:-1], cuts[1:], strict=True))
    cuts = [0]
    while cuts[-1] < n:
        nxt = np.searchsorted(starts, cuts[-1] + max(1, size), side="left")
        cuts.append(int(starts[nxt]) if nxt < len(starts) else n)
    return list(zip(cuts[:-1], cuts[1:], strict=True))


def _locate_one(pairs: pa.Table, claims: pa.Table, texts: pa.Table, book: Codebook,
                params: dict, con: duckdb.DuckDBPyConnection | None = None) -> pa.Table:
    """support_evidence rows of one set of pairs: only its claims' atoms and its pages'
    windows are built and scored (BM25 statistics are per page, so a set that holds every
    pair of each of its pages scores exactly as the whole day does)."""
    own = con is None
    con = con or duck.connect()
    try:
        wanted = pc.unique(pairs.column("payload_sha256").drop_null())
        used = texts.filter(pc.is_in(texts.column("payload_sha256"), wanted))
        cited = pc.unique(pairs.column("claim_id"))
        claims = claims.filter(pc.is_in(claims.column("claim_id"), cited))
        con.register("pairs", pairs)
        con.register("atoms", atoms_mod.atomize(claims, book.atomization))
        con.register("windows", windows_mod.windows(used, book.evidence.window_sentences))
        duck.execute(con, "support/create_terms_macro")
        duck.create_table(con, "atom_terms", "support/create_atom_terms", params)
        duck.create_table(con, "passage_terms", "support/create_passage_terms", params)
        duck.create_table(con, "top", "support/score_atom_passages", params)
        return duck.query(con, "support/select_support_evidence", params)
    finally:
        if own:
            con.close()


def locate_by_page(pairs: pa.Table, claims: pa.Table, texts: pa.Table, book: Codebook,
                   batch_pairs: int = BATCH_PAIRS) -> Iterator[pa.Table]:
    """support_evidence rows for ``pairs``, in batches of about ``batch_pairs`` pairs grouped
    by page (each page is windowed and tokenized once, with every pair that cites it; pairs
    without a readable page come last), each scored on its own DuckDB connection so memory is
    bounded by the batch. Each batch is in the table's order; the batches are not (see
    :func:`sorted_evidence`). At least one (possibly empty) table is yielded."""
    params = _params(book)
    pairs = pairs.sort_by([("payload_sha256", "ascending", "at_end"),
                           ("claim_id", "ascending", "at_end"),
                           ("citation_id", "ascending", "at_end")])
    wanted = pc.unique(pairs.column("payload_sha256").drop_null())
    pages = texts.filter(pc.is_in(texts.column("payload_sha256"), value_set=wanted))
    chars = dict(zip(pages.column("payload_sha256").to_pylist(),
                     pc.fill_null(pc.utf8_length(pages.column("text")), 0).to_pylist(),
                     strict=True))
    slices = _batch_slices(pairs.column("payload_sha256"), batch_pairs, chars) or [(0, 0)]
    for lo, hi in slices:
        yield _locate_one(pairs.slice(lo, hi - lo), claims, texts, book, params)


def sorted_evidence(batches: Iterable[pa.Table], workdir: Path) -> Iterator[pa.RecordBatch]:
    """The rows of ``batches`` in the table's order (claim_id, citation_id, atom_index), in
    record batches: the batches are spilled to a parquet file in ``workdir`` as they come and
    sorted by DuckDB within ``SORT_MEMORY`` (spilling to ``workdir`` beyond it)."""
    spill = Path(workdir) / "evidence-unsorted.parquet"
    writer = None
    try:
        for table in batches:
            if writer is None:
                writer = pq.ParquetWriter(spill, table.schema, compression="zstd")
            writer.write_table(table)
    finally:
        if writer is not None:
            writer.close()
    con = duck.connect(isolated=True)  # the spill sets instance-wide limits
    try:
        duck.spill_to_disk(con, SORT_MEMORY, Path(workdir) / "duckdb-tmp")
        result = con.sql(duck.sql_text("support/sort_support_evidence"),
                         params={"spill": str(spill)})
        reader = result.to_arrow_reader(READ_ROWS)
        empty = True
        for batch in reader:
            empty = False
            yield batch
        if empty:  # a day without pairs still writes a table with the schema
            yield pa.RecordBatch.from_pylist([], schema=reader.schema)
    finally:
        con.close()


def locate(pairs: pa.Table, claims: pa.Table, texts: pa.Table, book: Codebook,
           con: duckdb.DuckDBPyConnection | None = None) -> pa.Table:
    """support_evidence rows for ``pairs`` as one table, scored in one batch.

    ``claims`` needs ``claim_id`` and ``text``; ``texts`` ``payload_sha256`` and ``text``.
    """
    return _locate_one(pairs, claims, texts, book, _params(book), con)


def empty_evidence() -> pa.Table:
    """A support_evidence table with no rows (for a consumer whose input is absent)."""
    con = duck.connect()
    empty = pa.table({"claim_id": pa.array([], pa.string()), "text": pa.array([], pa.string())})
    pairs = pa.table({n: pa.array([], t) for n, t in (
        ("answer_id", pa.string()), ("claim_id", pa.string()), ("citation_id", pa.string()),
        ("url", pa.string()), ("capture_time", pa.timestamp("us", tz="UTC")),
        ("payload_sha256", pa.string()), ("unavailable_reason", pa.string()),
        ("engine", pa.string()), ("domain", pa.string()))})
    texts = pa.table({"payload_sha256": pa.array([], pa.string()),
                      "text": pa.array([], pa.string())})
    from citeaudit.codebook import validate

    book = validate({"version": "empty", "label_maps": {"s": {"x": "unresolved"}},
                     "source_roles": {}, "priority_weights": {"w": 1.0},
                     "policy": {"contextualize_above": 0.5}}, "(defaults)")
    return locate(pairs, empty, texts, book, con)


def without_soft_404s(aligned: pa.Table, existence: pa.Table) -> pa.Table:
    """``aligned`` (citation_captures) with each citation that L1 judged a soft-404
    (``citation_existence.reason = 'soft_404'``) marked unavailable (``resolution_issue``
    ``soft_404``): its capture is a "not found" page standing where the cited page was, so the
    evidence locator must say ``unresolved``, never "no evidence in page" from a dead page."""
    import pyarrow.compute as pc

    dead = existence.filter(pc.equal(existence["reason"], "soft_404"))["citation_id"]
    if len(dead) == 0:
        return aligned
    hit = pc.is_in(aligned["citation_id"], value_set=dead)
    issue = aligned["resolution_issue"]
    marked = pc.if_else(hit, pa.scalar("soft_404", issue.type), issue)
    return aligned.set_column(aligned.schema.get_field_index("resolution_issue"),
                              "resolution_issue", marked)


def evidence_pairs(claims: pa.Table, citations: pa.Table, answers: pa.Table,
                   aligned: pa.Table, texts: pa.Table) -> pa.Table:
    """The (claim, citation) pairs of one partition with their page digest or unavailable
    reason (``select_evidence_pairs.sql``)."""
    con = duck.connect()
    try:
        for name, table in (("claims", claims), ("citations", citations),
                            ("answers", answers), ("aligned", aligned), ("texts", texts)):
            con.register(name, table)
        return duck.query(con, "support/select_evidence_pairs")
    finally:
        con.close()


def support_evidence_batches(claims: pa.Table, citations: pa.Table, answers: pa.Table,
                             aligned: pa.Table, texts: pa.Table, book: Codebook, workdir: Path,
                             batch_pairs: int = BATCH_PAIRS) -> Iterator[pa.RecordBatch]:
    """The ``support_evidence`` table of one date × codebook partition as record batches in
    the table's order, computed in bounded memory (page batches, spilled to ``workdir`` and
    sorted there): the same rows, in the same order, as :func:`locate` over every pair."""
    pairs = cap_pages(evidence_pairs(claims, citations, answers, aligned, texts), texts)
    yield from sorted_evidence(locate_by_page(pairs, claims, texts, book, batch_pairs), workdir)
