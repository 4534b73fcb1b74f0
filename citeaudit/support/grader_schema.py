"""The ``grader_judgments`` row schema and the digest every grader names its inputs by (a
module of its own so the graders, :mod:`graders` and :mod:`judge`, import it, not each other)."""

from __future__ import annotations

import hashlib
import json

import pyarrow as pa

SCHEMA = pa.schema([
    ("answer_id", pa.string()), ("claim_id", pa.string()), ("citation_id", pa.string()),
    ("engine", pa.string()), ("domain", pa.string()),
    ("grader", pa.string()), ("grader_version", pa.string()), ("grader_digest", pa.string()),
    ("verdict", pa.string()), ("reason", pa.string()), ("detail", pa.string()),
    ("confidence", pa.float64()), ("score", pa.float64()),
    ("passage_text", pa.string()), ("capture_time", pa.timestamp("us", tz="UTC")),
    ("attempts", pa.int32()), ("input_tokens", pa.int64()), ("output_tokens", pa.int64()),
    ("request_sha256", pa.string()),
])


def digest_of(value: object) -> str:
    """SHA-256 of a JSON-able value in canonical form."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
