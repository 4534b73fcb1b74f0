"""Source-risk omission audit (seed 000): record contract, validation, endpoint, conformance.

``contract`` names the defect types, stages and table schemas; ``digests`` hashes with hashlib;
``validate`` types, seals and checks records in the seed's order (DuckDB SQL in
``sql/source_risk/``); ``lineage`` links revisions and picks the current record per tuple;
``endpoint`` resolves R_O, priority and the policy action; ``audit`` runs one date × codebook;
``conformance`` reproduces seed 000 §IV from this implementation.
"""
