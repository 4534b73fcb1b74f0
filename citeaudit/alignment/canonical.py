"""URL canonicalization for temporal alignment: one key per page, however an engine spelled it.

:func:`canonicalize` gives one URL's canonical URL and SURT key, or the reason it has none (the
steps: :mod:`citeaudit.archive.index.canonical`; it lives with the capture index's URL keys
because the live crawl, an earlier stage, keys the pages it fetches the same way).
:func:`canonical_table` keys a batch of distinct URLs for the join back in SQL.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pyarrow as pa

from citeaudit.archive.index import Canonical, canonicalize

__all__ = ["CANONICAL_SCHEMA", "Canonical", "canonical_table", "canonicalize"]

CANONICAL_SCHEMA = pa.schema(
    [
        pa.field("url", pa.string()),
        pa.field("canonical_url", pa.string()),
        pa.field("canonical_key", pa.string()),
        pa.field("url_error", pa.string()),
    ]
)


def canonical_table(urls: Iterable[str | None], is_tracking: Callable[[str], bool],
                    strict: bool = False) -> pa.Table:
    """One row per distinct input URL: url, canonical_url, canonical_key, url_error.

    Called with the distinct URLs of a batch (SURT keying is per-URL Python work; the join
    back to the rows happens in SQL), rows sorted by URL so the table is deterministic.
    """
    distinct = sorted({u for u in urls if u is not None})
    rows = {"url": [], "canonical_url": [], "canonical_key": [], "url_error": []}
    for u in distinct:
        c = canonicalize(u, is_tracking, strict)
        rows["url"].append(u)
        rows["canonical_url"].append(c.url)
        rows["canonical_key"].append(c.key)
        rows["url_error"].append(c.error)
    return pa.table(rows, schema=CANONICAL_SCHEMA)
