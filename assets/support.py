"""Support assets (date × codebook): judgments, rejections, adjudicated labels, review queue and
agreement. The rules live in citeaudit.support and sql/support/."""

import json
import tempfile
from pathlib import Path

import dagster as dg

from assets._metadata import (
    count_by,
    counts_text,
    remember_key,
    reuse_key,
    reuse_other_codebook,
    write_batches,
    write_table,
)
from citeaudit import codebook, config, parquet_io
from citeaudit.archive.lookup import add_replay_column
from citeaudit.layout import codebook_versions
from citeaudit.support import adjudication, agreement, evidence, graders, judgments, sample
from pipelines.partitions import date_codebook, judged_partition
from pipelines.resources import PathsResource


def _daily(name: str) -> str:
    """A daily upstream: Dagster maps a date × codebook partition to its date dimension."""
    return name


@dg.multi_asset(
    specs=[
        dg.AssetSpec(
            "support_judgments",
            deps=[_daily("claims"), _daily("citations")],
            description="Every accepted support annotation row, its raw label mapped through "
                        "the codebook onto the support rubric's five labels.",
        ),
        dg.AssetSpec(
            "rejected_annotations",
            deps=[_daily("claims"), _daily("citations")],
            description="Annotation rows that cannot be used (unknown label, annotator or "
                        "codebook version, orphan ids, duplicate judgments...) with reasons.",
        ),
    ],
    partitions_def=date_codebook,
)
def support_judgments(context: dg.AssetExecutionContext, paths: PathsResource):
    """Read annotations/support under the partition's codebook; split accepted / rejected."""
    part = judged_partition(context.partition_key)
    book = codebook.load_version(paths.raw, part["codebook"])
    classified = judgments.classify(paths.raw, paths.derived, book)
    accepted, rejected = judgments.judgments(classified, part["observation_date"])
    registry = judgments.read_registry(paths.raw)
    extra = {
        "support_judgments": {
            "labels": counts_text(count_by(accepted, "verdict")),
            "annotator_registry": "present" if registry is not None else
            "absent: annotator ids not checked",
            "codebook_versions_known": ", ".join(codebook_versions(paths.raw)),
        },
        "rejected_annotations": {"reasons": counts_text(count_by(rejected, "reason"))},
    }
    for name, table in (("support_judgments", accepted), ("rejected_annotations", rejected)):
        yield dg.MaterializeResult(
            asset_key=name, metadata=write_table(table, paths.derived, name, part, **extra[name]))


@dg.multi_asset(
    specs=[
        dg.AssetSpec(
            "support_labels",
            deps=["support_judgments", _daily("answers")],
            description="Per judged (claim, citation): majority over human annotators per atom "
                        "(tie = unresolved), aggregated over atoms (the three-layer audit's L2 "
                        "support layer), votes kept.",
        ),
        dg.AssetSpec(
            "review_queue",
            deps=["support_judgments", _daily("answers"), "support_evidence"],
            description="Partial, tied, unresolved and grader-only items, every item of a "
                        "high-risk domain, and a seeded sample of fully supported ones, "
                        "ordered by the evidence locator's signal, passage words marked.",
        ),
    ],
    partitions_def=date_codebook,
)
def support_labels(context: dg.AssetExecutionContext, paths: PathsResource):
    """Adjudicate, aggregate and queue; deterministic for the codebook's sampling seed."""
    part = judged_partition(context.partition_key)
    book = codebook.load_version(paths.raw, part["codebook"])
    judged = parquet_io.read_partition(paths.derived, "support_judgments", part)
    answers = parquet_io.read_partition(paths.derived, "answers",
                                        {"observation_date": part["observation_date"]})
    labels = adjudication.labels(judged, answers, book)
    queue = adjudication.review_queue(
        labels, parquet_io.read_optional(paths.derived, "support_evidence", part))
    queue = add_replay_column(queue, config.load(paths.raw).replay.link_prefix(),
                              "evidence_capture_time", "evidence_url")
    extra = {
        "support_labels": {"labels": counts_text(count_by(labels, "verdict"))},
        "review_queue": {"reasons": counts_text(count_by(queue, "reason"))},
    }
    for name, table in (("support_labels", labels), ("review_queue", queue)):
        yield dg.MaterializeResult(
            asset_key=name, metadata=write_table(table, paths.derived, name, part, **extra[name]))


@dg.asset(
    partitions_def=date_codebook,
    deps=["support_judgments", "support_labels", "support_evidence"],
    description="Krippendorff's alpha, pairwise Cohen's kappa (human annotators) and grader vs "
                "adjudicated-human confusion counts (the evidence locator's signals "
                "included), overall and per engine and domain.",
)
def annotation_agreement(context: dg.AssetExecutionContext,
                         paths: PathsResource) -> dg.MaterializeResult:
    """Agreement of the partition's original (pre-adjudication) human labels."""
    part = judged_partition(context.partition_key)
    judged = parquet_io.read_partition(paths.derived, "support_judgments", part)
    labels = parquet_io.read_partition(paths.derived, "support_labels", part)
    table = agreement.agreement(
        judged, labels, parquet_io.read_optional(paths.derived, "support_evidence", part))
    alpha = [r["value"] for r in table.to_pylist()
             if r["stratum"] == "overall" and r["statistic"] == "krippendorff_alpha"]
    return dg.MaterializeResult(metadata=write_table(
        table, paths.derived, "annotation_agreement", part,
        alpha_overall=str(alpha[0] if alpha else None)))


@dg.asset(
    partitions_def=date_codebook,
    deps=[_daily("claims"), _daily("citations"), _daily("answers"), "citation_captures",
          "citation_existence", "payload_texts"],
    description="Grader rows (never gold): per claim, citation and atom, the best passage of "
                "the archived page (BM25, offsets), coverage, hard-mismatch flags and a verdict "
                "(evidence_located, weak_evidence, mismatch_flagged, no_evidence_in_page, "
                "unresolved).",
)
def support_evidence(context: dg.AssetExecutionContext,
                     paths: PathsResource) -> dg.MaterializeResult:
    """Locate each atom of each cited claim in its aligned page (thresholds: the codebook),
    in page batches, spilled and sorted in a private temporary folder and written row group by
    row group, so memory stays bounded by a batch, not by the day."""
    part = judged_partition(context.partition_key)
    day = {"observation_date": part["observation_date"]}
    book = codebook.load_version(paths.raw, part["codebook"])
    # the codebook settings the evidence locator reads: another codebook with the same ones
    # (and the same inputs) has already written this partition's bytes
    key = reuse_key(paths.derived, "support_evidence",
                    {"claims": day, "citations": day, "answers": day, "citation_captures": part,
                     "payload_texts": part, "citation_existence": part},
                    {"evidence": book.evidence, "atomization": book.atomization})
    reused = reuse_other_codebook(paths.derived, "support_evidence", part, key, signals=None,
                                  grader=f"{evidence.GRADER} {evidence.GRADER_VERSION}")
    if reused is not None:
        written = parquet_io.partition_dir(paths.derived, "support_evidence", part)
        reused["signals"] = dg.MetadataValue.text(
            counts_text(count_by(written / parquet_io.DATA_FILE, "verdict")))
        return dg.MaterializeResult(metadata=reused)
    inputs = [parquet_io.read_partition(paths.derived, name, where).select(columns)
              for name, where, columns in (
                  ("claims", day, ["claim_id", "text"]),
                  ("citations", day, ["answer_id", "claim_id", "citation_id", "url"]),
                  ("answers", day, ["answer_id", "engine", "domain"]),
                  ("citation_captures", part, ["citation_id", "final_capture_time",
                                               "payload_sha256", "resolution_issue",
                                               "final_status"]),
                  ("payload_texts", part, ["payload_sha256", "text", "error"]))]
    existence = parquet_io.read_partition(paths.derived, "citation_existence", part).select(
        ["citation_id", "reason"])
    inputs[3] = evidence.without_soft_404s(inputs[3], existence)
    with tempfile.TemporaryDirectory(prefix="citeaudit-evidence-") as work:
        meta = write_batches(
            evidence.support_evidence_batches(*inputs, book, Path(work)), None,
            paths.derived, "support_evidence", part, signals=None,
            grader=f"{evidence.GRADER} {evidence.GRADER_VERSION}")
    # counted in the written file (one column read): the batches stream through untouched
    written = parquet_io.partition_dir(paths.derived, "support_evidence", part)
    signals = count_by(written / parquet_io.DATA_FILE, "verdict")
    meta["signals"] = dg.MetadataValue.text(counts_text(signals))
    remember_key(paths.derived, "support_evidence", part, key)
    return dg.MaterializeResult(metadata=meta)


@dg.asset(
    partitions_def=date_codebook,
    deps=["support_evidence", _daily("claims")],
    description="Grader labels (never gold) of every cited claim-citation pair on the support "
                "rubric's scale: the evidence locator always, the LLM judge when "
                "CITEAUDIT_JUDGE_BASE_URL is set; name, version, digest, confidence, the "
                "passage seen, tokens.",
)
def grader_judgments(context: dg.AssetExecutionContext,
                     paths: PathsResource) -> dg.MaterializeResult:
    """Label every pair of the partition with each configured grader (replies of the LLM
    judge cached under raw/judge_cache, so a rerun asks nothing)."""
    part = judged_partition(context.partition_key)
    book = codebook.load_version(paths.raw, part["codebook"])
    evidence_rows = parquet_io.read_partition(paths.derived, "support_evidence", part)
    claims = parquet_io.read_partition(paths.derived, "claims",
                                       {"observation_date": part["observation_date"]})
    used = graders.graders(book, paths.raw)
    table = graders.grade_all(used, graders.items(evidence_rows, claims))
    extra = {"graders": ", ".join(f"{g.name} {g.version}" for g in used),
             "labels": counts_text(count_by(table, "verdict"))}
    for g in used:
        if hasattr(g, "accounting"):
            extra[f"{g.name}_accounting"] = json.dumps(g.accounting.as_dict(g.settings))
    return dg.MaterializeResult(metadata=write_table(
        table, paths.derived, "grader_judgments", part, **extra))


@dg.asset(
    partitions_def=date_codebook,
    deps=["support_labels", "grader_judgments"],
    description="The drawn review sample (annotations/samples/DATE/CODEBOOK.csv) with each "
                "pair's stratum, inclusion probability, human and grader verdicts; and the "
                "pairs labelled outside the sample, shown but never used for design-based "
                "rates.",
)
def review_sample(context: dg.AssetExecutionContext,
                  paths: PathsResource) -> dg.MaterializeResult:
    """Join the sample's design to what people and the primary grader said of each pair."""
    part = judged_partition(context.partition_key)
    book = codebook.load_version(paths.raw, part["codebook"])
    drawn = sample.read_optional(paths.raw, part["observation_date"], part["codebook"])
    table = sample.review_sample(
        drawn, parquet_io.read_partition(paths.derived, "support_labels", part),
        parquet_io.read_partition(paths.derived, "grader_judgments", part),
        book.graders.primary)
    return dg.MaterializeResult(metadata=write_table(
        table, paths.derived, "review_sample", part,
        sample="drawn" if drawn is not None else "none drawn (citeaudit sample)",
        status=counts_text(count_by(table, "status"))))
