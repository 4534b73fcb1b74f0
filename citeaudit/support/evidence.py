"""The evidence locator: where the archived page says what each atom of a claim says.

For every cited (claim, citation) pair with a readable archived page (``payload_texts`` through
``citation_captures``), every atom of the claim (``citeaudit.support.atoms``) is scored against
the page's passage windows (``citeaudit.support.windows``) with BM25 in SQL over a term table
(``sql/support/score_atom_passages.sql``: the page's windows are the collection), and the best
passage is checked for what it visibly does not say (``select_support_evidence.sql``). The
*signal* orders human review; it is never a support verdict, and the rows are a grader's:

- ``page_unavailable``: no readable capture (the reason is kept): unknown, never negative;
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

import duckdb
import pyarrow as pa

from citeaudit import duck
from citeaudit.codebook import Codebook
from citeaudit.support import atoms as atoms_mod
from citeaudit.support import windows as windows_mod

GRADER = "citeaudit-evidence-locator"
GRADER_VERSION = "1.0"
SIGNALS = ("mismatch_flagged", "no_evidence_in_page", "weak_evidence", "evidence_located",
           "page_unavailable")
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


def locate(pairs: pa.Table, claims: pa.Table, texts: pa.Table, book: Codebook,
           con: duckdb.DuckDBPyConnection | None = None) -> pa.Table:
    """support_evidence rows for ``pairs`` (select_evidence_pairs' columns).

    ``claims`` needs ``claim_id`` and ``text``; ``texts`` ``payload_sha256`` and ``text``.
    """
    con = con or duck.connect()
    params = _params(book)
    wanted = set(pairs.column("payload_sha256").drop_null().to_pylist())
    used = texts.filter(pa.compute.is_in(texts.column("payload_sha256"),
                                         pa.array(sorted(wanted), pa.string())))
    cited = set(pairs.column("claim_id").to_pylist())
    claims = claims.filter(pa.compute.is_in(claims.column("claim_id"),
                                            pa.array(sorted(cited), pa.string())))
    con.register("pairs", pairs)
    con.register("atoms", atoms_mod.atomize(claims, book.atomization))
    con.register("windows", windows_mod.windows(used, book.evidence.window_sentences))
    duck.execute(con, "support/create_terms_macro")
    duck.create_table(con, "atom_terms", "support/create_atom_terms", params)
    duck.create_table(con, "passage_terms", "support/create_passage_terms", params)
    duck.create_table(con, "top", "support/score_atom_passages", params)
    return duck.query(con, "support/select_support_evidence", params)


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


def support_evidence(claims: pa.Table, citations: pa.Table, answers: pa.Table,
                     aligned: pa.Table, texts: pa.Table, book: Codebook) -> pa.Table:
    """The ``support_evidence`` table of one date × codebook partition."""
    con = duck.connect()
    for name, table in (("claims", claims), ("citations", citations), ("answers", answers),
                        ("aligned", aligned), ("texts", texts)):
        con.register(name, table)
    pairs = duck.query(con, "support/select_evidence_pairs")
    return locate(pairs, claims, texts, book, con)
