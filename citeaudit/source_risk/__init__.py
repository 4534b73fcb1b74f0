"""Source risk (the source-risk audit specification, docs/references.md#source-risk-audit): whether
an answer omitted a material relationship of its source.
Records are validated in the specification's execution order, sealed with SHA-256 digests,
revised append-only, and resolved to R_O (NULL = unresolved), a review priority and a policy
action. Writes ``source_risk_records``, ``rejected_records``, ``omission_endpoints`` and
``source_risk_claim_ledger``.

``contract`` names the defect types and schemas; ``digests`` hashes; ``validate`` types, seals
and checks records (DuckDB SQL in ``sql/source_risk/``); ``endpoint`` resolves R_O, priority and
the policy action; ``audit`` runs one date × codebook; ``conformance`` reproduces its conformance
suite.
"""
