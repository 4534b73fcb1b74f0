"""Which derived tables one date × codebook can read, registered as DuckDB views.

Daily tables live at ``<asset>/observation_date=D/``; judged tables at
``<asset>/observation_date=D/codebook=V/``. A table that was not materialized is simply absent:
the metrics that need it report "input not available" instead of a rate (never a zero).
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from citeaudit import duck, parquet_io, storage

DAILY = ("answers", "claims", "citations", "answer_checks", "rejected_inputs")
JUDGED = (
    "citation_existence",
    "support_judgments",
    "passage_checks",
    "support_labels",
    "review_queue",
    "annotation_agreement",
    "metadata_checks",
    "omission_endpoints",
    "rejected_records",
    "rejected_annotations",
    "grader_judgments",
    "review_sample",
)


def partition_file(derived: Path, table: str, date: str, version: str) -> Path:
    """The parquet file of ``table`` for one date (daily) or one date × codebook (judged)."""
    part = {"observation_date": date}
    if table not in DAILY:
        part["codebook"] = version
    return parquet_io.partition_dir(derived, table, part) / parquet_io.DATA_FILE


def available(derived: Path, date: str, version: str) -> dict[str, Path]:
    """Every known input table whose partition file exists, with its path."""
    found = {}
    for table in (*DAILY, *JUDGED):
        path = partition_file(derived, table, date, version)
        if path.is_file():
            found[table] = path
    return found


def local_copies(tables: dict[str, Path], folder: Path) -> dict[str, Path]:
    """Each input partition on object storage copied once into ``folder`` (local paths as they
    are): the metric queries read the views dozens of times, and every read of an ``s3://``
    view is a listing and ranged GETs of the object again."""
    out = {}
    for name, path in tables.items():
        if storage.is_remote(path):
            local = Path(folder) / f"{name}.parquet"
            local.write_bytes(storage.read_bytes(path))
            out[name] = local
        else:
            out[name] = path
    return out


def register(con: duckdb.DuckDBPyConnection, tables: dict[str, Path]) -> set[str]:
    """Create one view per available table (plus ``claim_labels``); return the view names.

    ``claim_labels`` (claim-level support, for citation recall and precision: claim_id, label,
    human_judged) is the adjudicated pairs aggregated per claim.
    """
    for name, path in tables.items():
        rel = con.read_parquet(str(path))
        if name == "support_labels" and "basis" not in rel.columns:
            # the contract's minimum columns have no basis: then every label is a human one
            rel = rel.project("*, 'human' AS basis")
        if name == "citation_existence" and "replay_url" not in rel.columns:
            # an optional column (replay links): absent from the contract's minimum
            rel = rel.project("*, NULL::VARCHAR AS replay_url")
        if name == "citation_existence" and "capture_fidelity" not in rel.columns:
            # optional too (the L1 breakdown's pass_rendered): absent, every pass is static
            rel = rel.project("*, NULL::VARCHAR AS capture_fidelity")
        rel.create_view(name)
    names = set(tables)
    if "answers" in names:
        # the strata join the unit queries over judged tables share: stratified(judged)
        duck.execute(con, "metrics/create_stratified_macro")
    if "support_labels" in names:
        duck.create_table(con, "claim_labels", "metrics/select_claim_labels_from_pairs")
        names.add("claim_labels")
    return names
