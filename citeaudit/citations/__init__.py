"""Citations: the fail-closed verification rule (docs/references.md#fail-closed-verification). Per
claim, the first failure in order
(``missing_citation``, ``malformed_citation``, ``hallucinated_citation``); per answer, verified
or rejected, and only verified answers are served. Writes ``claim_checks`` and ``answer_checks``.
"""
