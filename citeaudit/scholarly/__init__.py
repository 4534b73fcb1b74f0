"""Scholarly (L3, the three-layer audit's L3 metadata layer, docs/references.md): whether a cited
work's metadata is what the registries hold.
DOIs are found and normalized, Crossref and OpenAlex are asked once (cached, polite), and each
citation is consistent / mismatch / not_found / unmatched / unresolved. Writes
``scholarly_records``, ``metadata_checks`` and ``claim_independence``.

``doi`` extracts identifiers, ``records`` reads registry JSON, ``compare`` decides a verdict,
``transport``/``clients`` talk to the registries through crossrefapi and pyalex, ``cache`` keeps
what was fetched, ``mirror`` is a loopback registry for tests and the demo, ``check`` ties them.
"""
