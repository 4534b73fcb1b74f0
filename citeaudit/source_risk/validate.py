"""Validate source-risk lines in seed 000's order and split them into ledger rows and rejections.

Everything row-wise runs in DuckDB SQL over the whole batch (``sql/source_risk/``); Python only
hashes (hashlib over the canonical strings SQL builds) and hands Arrow tables between steps:

1. ``type_record_lines``: parse, keep JSON types ("U", 0, null, missing key stay apart), join
   the answers (answer and query snapshot) and, when available, aligned captures;
2. hash snapshot contents → ``seal_tuples`` (tuple canonical JSON) → hash → ``seal_records``
   (record canonical JSON) → hash;
3. ``check_records``: the first defect in order (fields and hashes → predicates and evidence →
   dimensions and weights);
4. ``link_revisions``: duplicates and parent links of the append-only ledger.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from citeaudit import duck
from citeaudit.source_risk import contract
from citeaudit.source_risk.digests import canonical_json, sha256_column, sha256_hex

LINES_SCHEMA = pa.schema([("file", pa.string()), ("line", pa.int64()), ("raw", pa.string())])
ANSWERS_SCHEMA = pa.schema([
    ("answer_id", pa.string()), ("query_id", pa.string()), ("query_sha256", pa.string()),
    ("answer_text", pa.string()), ("answer_sha256", pa.string()), ("observed_at", pa.string()),
])
SOURCES_SCHEMA = pa.schema([
    ("answer_id", pa.string()), ("source_url", pa.string()), ("canonical_url", pa.string()),
    ("rank", pa.int32()), ("payload_sha256", pa.string()), ("capture_time", pa.string()),
])
PRIOR_SCHEMA = pa.schema([
    ("record_digest", pa.string()), ("tuple_digest", pa.string()),
    ("line_sha256", pa.string()), ("line_canonical_sha256", pa.string()),
])


@dataclass(frozen=True)
class Settings:
    """What a validation run needs from the codebook and the pipeline."""

    weights: dict[str, float]
    roles: tuple[str, ...]
    source_snapshots: str = "record_url"

    def params(self) -> dict:
        """The SQL parameters: sorted weights, this run's pipeline identity, the roles."""
        config = contract.pipeline_config(self.source_snapshots)
        keys = sorted(self.weights)
        return {
            "weight_keys": keys,
            "weight_values": [float(self.weights[k]) for k in keys],
            "pipeline_name": contract.PIPELINE_NAME,
            "pipeline_version": contract.CONTRACT_VERSION,
            "pipeline_config": sha256_hex(canonical_json(config).decode()),
            "roles": list(self.roles),
        }


@dataclass(frozen=True)
class Validated:
    """Accepted ledger rows and rejected lines of one batch, and every line's digests.

    ``digests`` (file, line, tuple_digest, record_digest) holds the digests computed for every
    typed line, accepted or not: sealing a record is validating it and keeping these.
    """

    records: pa.Table
    rejected: pa.Table
    digests: pa.Table


def _hash_into(con: duckdb.DuckDBPyConnection, name: str, table: str,
               columns: dict[str, str]) -> None:
    """Register ``name``(file, line, <out>...) with the SHA-256 of ``table``'s string columns."""
    src = con.table(table).select(*(["file", "line"] + list(columns))).to_arrow_table()
    out = {"file": src.column("file"), "line": src.column("line")}
    for col, alias in columns.items():
        out[alias] = sha256_column(src.column(col))
    con.register(name, pa.table(out))


def empty(schema: pa.Schema) -> pa.Table:
    """An empty input table (a context the caller does not have)."""
    return schema.empty_table()


def validate(
    lines: pa.Table,
    settings: Settings,
    answers: pa.Table | None = None,
    sources: pa.Table | None = None,
    prior: pa.Table | None = None,
    con: duckdb.DuckDBPyConnection | None = None,
) -> Validated:
    """Type, seal and check a batch of source-risk lines (file, line, raw).

    ``answers``/``sources``/``prior`` follow ANSWERS_SCHEMA/SOURCES_SCHEMA/PRIOR_SCHEMA and may
    be omitted (records must then carry their snapshots, as the conformance fixtures do).
    """
    con = con or duck.connect()
    params = settings.params()
    raw = lines.column("raw")
    con.register("sr_lines", pa.table({
        "file": lines.column("file"), "line": lines.column("line"), "raw": raw,
        "line_sha256": sha256_column(raw)}))
    con.register("sr_answers", answers if answers is not None else empty(ANSWERS_SCHEMA))
    con.register("sr_sources", sources if sources is not None else empty(SOURCES_SCHEMA))
    con.register("sr_prior", prior if prior is not None else empty(PRIOR_SCHEMA))

    duck.create_table(con, "sr_typed", "source_risk/type_record_lines", params)
    typed = con.table("sr_typed").select(
        "file", "line", "answer_carried_text", "answer_joined_sha256", "source_text",
        "source_record_json").to_arrow_table()
    carried = sha256_column(typed.column("answer_carried_text"))
    con.register("sr_content_hashes", pa.table({
        "file": typed.column("file"), "line": typed.column("line"),
        "answer_text_sha256": pc.coalesce(carried, typed.column("answer_joined_sha256")),
        "source_text_sha256": sha256_column(typed.column("source_text")),
        "source_record_sha256": sha256_column(typed.column("source_record_json")),
    }))
    duck.create_table(con, "sr_sealed_tuples", "source_risk/seal_tuples", params)
    _hash_into(con, "sr_tuple_hashes", "sr_sealed_tuples", {"tuple_json": "tuple_digest_calc"})
    duck.create_table(con, "sr_sealed_records", "source_risk/seal_records", params)
    _hash_into(con, "sr_record_hashes", "sr_sealed_records",
               {"record_json": "record_digest_calc"})
    duck.create_table(con, "sr_checked", "source_risk/check_records", params)

    cands = duck.query(con, "source_risk/select_parent_candidates")
    canon = [hashlib.sha256(canonical_json(json.loads(r))).hexdigest()
             for r in cands.column("raw").to_pylist()]
    con.register("sr_line_canon", pa.table({
        "file": cands.column("file"), "line": cands.column("line"),
        "line_canonical_sha256": pa.array(canon, type=pa.string())}))
    duck.create_table(con, "sr_linked", "source_risk/link_revisions", params)
    records = duck.query(con, "source_risk/select_records",
                         {"gate": contract.VALIDATION_GATE})
    rejected = duck.query(con, "source_risk/select_rejected_records").cast(
        contract.REJECTED_SCHEMA)
    digests = duck.query(con, "source_risk/select_line_digests")
    return Validated(records, rejected, digests)
