"""The analyst's entry point: data/derived/catalog.duckdb with one view per asset."""

import dagster as dg

from citeaudit import catalog as catalog_lib
from pipelines.resources import PathsResource

CATALOGUED = [
    "answers",
    "claims",
    "citations",
    "rejected_inputs",
    "ignored_inputs",
    "captures",
    "claim_checks",
    "answer_checks",
    "metrics",
    "support_judgments",
    "rejected_annotations",
    "support_labels",
    "review_queue",
    "annotation_agreement",
    "support_evidence",
    "citation_captures",
    "citation_existence",
    "payload_texts",
    "passage_checks",
    "scholarly_records",
    "metadata_checks",
    "claim_independence",
    "source_risk_records",
    "rejected_records",
    "omission_endpoints",
    "source_risk_claim_ledger",
]


@dg.asset(
    group_name="catalog",
    deps=CATALOGUED,
    description="data/derived/catalog.duckdb: a view per derived asset over its parquet files.",
)
def catalog(paths: PathsResource) -> dg.MaterializeResult:
    """Rebuild the DuckDB catalog (atomically) over whatever partitions are on disk."""
    path = catalog_lib.build(paths.derived)
    views = sorted(catalog_lib.assets_on_disk(paths.derived))
    return dg.MaterializeResult(
        metadata={
            "path": dg.MetadataValue.path(str(path)),
            "views": dg.MetadataValue.text(", ".join(views)),
        }
    )
