"""Alignment: which capture each citation points at, and what L1 and mechanical L2 say of it.
Cited URLs are canonicalized, tied to the capture nearest their reference time inside the
codebook's window (redirects and revisits followed), classified pass / dead / changed / unknown,
and the cited quote is looked for in the page text. Writes ``citation_captures``,
``citation_existence``, ``payload_texts`` and ``passage_checks``.
"""
