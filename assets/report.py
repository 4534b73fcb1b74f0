"""The ``report`` asset: one self-contained HTML page per date × codebook."""

import base64

import dagster as dg

from citeaudit import codebook, layout
from citeaudit.report import render
from pipelines.partitions import date_codebook, judged_partition
from pipelines.resources import PathsResource


@dg.asset(
    partitions_def=date_codebook,
    deps=["metrics", "review_queue", "annotation_agreement", "omission_endpoints",
          "citation_existence", "comparisons", "alerts", "cited_domains"],
    description=(
        "report/observation_date=D/codebook=V/index.html: headline per engine, rates with "
        "intervals by engine and domain, L1 and support breakdowns, omission findings with "
        "policy actions, review queue, agreement, trend; offline, escaped, no script."
    ),
)
def report(context: dg.AssetExecutionContext, paths: PathsResource) -> dg.MaterializeResult:
    """Render the page from the metrics of this partition (and earlier dates for the trend)."""
    part = judged_partition(context.partition_key)
    date, version = part["observation_date"], part["codebook"]
    book = codebook.load_version(paths.raw, version)
    result = render.build(paths.derived, date, version, codebook_description=book.description,
                          codebook_metrics=book.metrics, codebook_sha=book.sha256,
                          caveats=layout.import_caveats(paths.raw, date))
    absent = [name for name, present in result.sections.items() if not present]
    if absent:
        context.log.warning(f"report sections without input: {', '.join(absent)}")
    plot = base64.b64encode(result.plot_svg.encode("utf-8")).decode("ascii")
    return dg.MaterializeResult(
        metadata={
            "path": dg.MetadataValue.path(str(result.path)),
            "summary": dg.MetadataValue.md(result.markdown),
            "plot": dg.MetadataValue.md(
                f"![headline rates by engine](data:image/svg+xml;base64,{plot})"
            ),
            "plot_path": dg.MetadataValue.path(str(result.plot_path)),
            "sections_without_input": dg.MetadataValue.text(", ".join(absent) or "none"),
        }
    )
