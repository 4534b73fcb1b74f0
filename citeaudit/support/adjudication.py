"""Adjudication (the three-layer audit's L2 support layer and the support rubric,
docs/references.md): several annotators' judgments of one item become one
label (majority; a tie is unresolved and queued; disagreement kept), atomic claims aggregate
per citation, and the review queue takes what people must look at. The rules are
``sql/support/select_support_labels.sql`` and ``select_review_queue.sql``.
"""

from __future__ import annotations

import pyarrow as pa

from citeaudit import duck
from citeaudit.codebook import Codebook


def labels(judged: pa.Table, answers: pa.Table, book: Codebook) -> pa.Table:
    """support_labels: adjudicated per item, aggregated over atoms, with the review decision."""
    con = duck.connect()
    con.register("support_judgments", judged)
    con.register("answers", answers.select(["answer_id", "engine", "domain"]))
    return duck.query(con, "support/select_support_labels", {
        "high_risk": list(book.high_risk_domains),
        "rate": book.review_sampling.supported_rate,
        "seed": str(book.review_sampling.seed),
    })


def review_queue(support_labels: pa.Table, evidence: pa.Table | None = None) -> pa.Table:
    """review_queue: the queued rows of support_labels with their reasons, ordered by the
    evidence locator's signals (``support_evidence``; none given: every evidence column NULL)."""
    from citeaudit.support.evidence import empty_evidence

    con = duck.connect()
    con.register("support_labels", support_labels)
    con.register("evidence", evidence if evidence is not None else empty_evidence())
    duck.execute(con, "support/create_terms_macro")
    return duck.query(con, "support/select_review_queue")
