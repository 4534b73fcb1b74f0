"""The whole-table evidence locator, kept as the reference for the bounded-memory path.

:func:`citeaudit.support.evidence.support_evidence_batches` (what the asset runs) scores page
batches, spills them and sorts them in DuckDB; this scores every pair of the partition in one
DuckDB query. Both must give the same rows in the same order: ``tests/support/test_evidence.py``
checks it and ``benchmarks/bench_evidence.py`` measures both. It lives with the tests because
only they and the benchmark run it.
"""

from __future__ import annotations

import pyarrow as pa

from citeaudit.codebook import Codebook
from citeaudit.support.evidence import evidence_pairs, locate


def support_evidence(claims: pa.Table, citations: pa.Table, answers: pa.Table,
                     aligned: pa.Table, texts: pa.Table, book: Codebook) -> pa.Table:
    """The ``support_evidence`` table of one date × codebook partition, whole, in one batch
    (the reference the bounded-memory path is tested against)."""
    pairs = evidence_pairs(claims, citations, answers, aligned, texts)
    return locate(pairs, claims, texts, book)
