"""The comparison assets: per-query sums, paired comparisons with intervals, and alerts."""

import dagster as dg

from assets._metadata import write_table
from citeaudit import codebook, layout
from citeaudit.comparisons import alerts as alerts_mod
from citeaudit.comparisons import compute, domains, units
from citeaudit.metrics import inputs
from pipelines.partitions import date_codebook, judged_partition
from pipelines.resources import PathsResource

UNIT_DEPS = [
    *inputs.DAILY,
    "citation_existence",
    "passage_checks",
    "support_judgments",
    "support_labels",
    "metadata_checks",
    "omission_endpoints",
]


@dg.asset(
    partitions_def=date_codebook,
    deps=["metrics", *UNIT_DEPS],
    description=(
        "Per metric, engine and query: units, resolved, unresolved, and the sums of w*y and w "
        "over the resolved units (the metrics' own units): what comparisons of this and later "
        "dates read."
    ),
)
def comparison_units(context: dg.AssetExecutionContext, paths: PathsResource):
    """Reduce the metrics' units of this date × codebook to one row per query."""
    part = judged_partition(context.partition_key)
    table = units.query_sums(paths.derived, part["observation_date"], part["codebook"])
    return dg.MaterializeResult(
        metadata=write_table(table, paths.derived, units.TABLE, part,
                             queries=len(set(table.column("query_id").to_pylist()))))


@dg.asset(
    partitions_def=date_codebook,
    deps=["comparison_units"],
    check_specs=[
        dg.AssetCheckSpec("no_alert", asset="comparisons",
                          description="no alert rule of the codebook fires on this date × "
                                      "codebook (severity: the rule's)"),
    ],
    description=(
        "Engine vs engine (paired by query), this date vs the previous date and vs the 7 days "
        "before, this codebook vs earlier ones: the two estimates, the difference, its 95% "
        "interval (queries as clusters), p-value and Holm-adjusted p-value, paired and unpaired "
        "queries, unresolved units beside."
    ),
)
def comparisons(context: dg.AssetExecutionContext, paths: PathsResource):
    """Compare this date × codebook with the engines, dates and codebooks written before it."""
    part = judged_partition(context.partition_key)
    date, version = part["observation_date"], part["codebook"]
    current = units.read(paths.derived, date, version)
    if current is None:
        raise dg.Failure(f"comparison_units of {date} × {version} is not materialized: run "
                         f"citeaudit run --date {date} --codebook {version}")
    history = compute.history(paths.derived, date, version, compute.BASELINE_DAYS)
    others = compute.earlier_codebooks(paths.derived, date, version,
                                       layout.codebook_versions(paths.raw))
    table = compute.compare(current, date, version, history=history, codebooks=others)
    book = codebook.load_version(paths.raw, version)
    alerts_mod.check_rules(book)
    fired = alerts_mod.evaluate(book.alerts, table).to_pylist()
    families = sorted(set(table.column("family").to_pylist()))
    meta = write_table(table, paths.derived, "comparisons", part,
                       families=", ".join(families) or "none",
                       significant=sum(bool(s) for s in table.column("significant").to_pylist()),
                       alerts=len(fired))
    severity = (dg.AssetCheckSeverity.ERROR if any(a["severity"] == "error" for a in fired)
                else dg.AssetCheckSeverity.WARN)
    yield dg.AssetCheckResult(
        check_name="no_alert", passed=not fired, severity=severity,
        metadata={"rules": len(book.alerts), "fired": len(fired),
                  "alerts": dg.MetadataValue.md("\n".join(
                      f"- **{a['rule']}** ({a['severity']}): {a['detail']}" for a in fired)
                      or "none")})
    yield dg.MaterializeResult(metadata=meta)


@dg.asset(
    partitions_def=date_codebook,
    deps=["comparisons"],
    description="Every alert rule of the codebook that fires, with the comparison it fired on.",
)
def alerts(context: dg.AssetExecutionContext, paths: PathsResource):
    """Apply the codebook's ``alerts:`` rules to this date × codebook's comparisons."""
    part = judged_partition(context.partition_key)
    book = codebook.load_version(paths.raw, part["codebook"])
    table = alerts_mod.evaluate(
        book.alerts, compute.read(paths.derived, part["observation_date"], part["codebook"]))
    for row in table.to_pylist():
        context.log.warning(f"alert {row['rule']} ({row['severity']}): {row['detail']}")
    return dg.MaterializeResult(
        metadata=write_table(table, paths.derived, "alerts", part, rules=len(book.alerts)))


@dg.asset(
    partitions_def=date_codebook,
    deps=["answers", "citations", "citation_existence", "support_labels"],
    description=(
        "Per engine (and all) and cited domain: citations, answers, queries; dead, changed and "
        "unsupported rates with intervals (queries as clusters), unresolved beside; sources "
        "retrieved on the domain but never cited."
    ),
)
def cited_domains(context: dg.AssetExecutionContext, paths: PathsResource):
    """Which sites the engines cite on this date × codebook, and how those citations fare."""
    part = judged_partition(context.partition_key)
    table = domains.cited_domains(paths.derived, part["observation_date"], part["codebook"])
    engines = table.column("engine").to_pylist()
    return dg.MaterializeResult(
        metadata=write_table(table, paths.derived, domains.TABLE, part,
                             domains=sum(e == domains.ALL for e in engines)))
