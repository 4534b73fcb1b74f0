"""Citations: seed 001's fail-closed check. Per claim, the first failure in order
(``missing_citation``, ``malformed_citation``, ``hallucinated_citation``); per answer, verified
or rejected, and only verified answers are served. Writes ``claim_checks`` and ``answer_checks``.
"""
