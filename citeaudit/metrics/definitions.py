"""What each metric counts: its unit, numerator, denominator, what is unresolved, its inputs.

The ``metrics`` table (one row per metric and stratum) and the report both read these
definitions, so a number on the page always links to the text that says what it counts. A
codebook may carry its own wording for a metric (``metrics:`` in the YAML); the report shows
that text beside the one here, which states the arithmetic the code actually does.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MetricDef:
    """One metric: how its units are selected (a SQL file) and how they are aggregated.

    ``kind`` is ``rate`` (y is 0/1, the estimate is a proportion) or ``mean`` (y is a real
    number, e.g. tokens). ``weighted`` metrics use the design weight 1/inclusion_prob of the
    answer a unit belongs to; the others weigh every unit the same. ``inputs`` are the derived
    tables the unit query reads; when one is not materialized the metric reports that instead
    of a rate. ``overall_only`` metrics have no engine/domain (rejected input lines).

    ``definition`` names whose definition the number follows: ``project`` (ours, fail-closed:
    unresolved units are set aside and counted beside), or a paper's (``liu2023``,
    ``expertqa``), computed as that paper computes it so it can be read beside the published
    table. ``kind = "f1"`` is the harmonic mean of the two rates named in ``components``
    (precision, recall), with no SQL of its own.
    """

    name: str
    title: str
    unit: str
    sql: str
    inputs: tuple[str, ...]
    numerator: str
    denominator: str
    unresolved: str
    kind: str = "rate"
    weighted: bool = True
    overall_only: bool = False
    higher_is_better: bool = True
    definition: str = "project"
    components: tuple[str, ...] = ()


METRICS: tuple[MetricDef, ...] = (
    MetricDef(
        "existence_rate",
        "Existence rate (L1)",
        "citation",
        "metrics/select_existence_units",
        ("answers", "citations", "citation_existence"),
        "citations whose aligned capture passes (final 2xx, content as cited)",
        "citations with verdict pass, dead or changed",
        "citations with verdict unresolved (no capture in the window, unreadable record) or no "
        "existence row",
    ),
    MetricDef(
        "dead_rate",
        "Dead-citation rate (L1)",
        "citation",
        "metrics/select_dead_units",
        ("answers", "citations", "citation_existence"),
        "citations whose aligned capture is dead (final 4xx/5xx, or a redirect loop)",
        "citations with verdict pass, dead or changed",
        "citations with verdict unresolved or with no existence row",
        higher_is_better=False,
    ),
    MetricDef(
        "changed_rate",
        "Changed-citation rate (L1)",
        "citation",
        "metrics/select_changed_units",
        ("answers", "citations", "citation_existence"),
        "citations with verdict changed (the aligned capture was a readable 2xx, but a later "
        "capture differs from it: the citation needs re-retrieval)",
        "citations with verdict pass, dead or changed",
        "citations with verdict unresolved or with no existence row",
        higher_is_better=False,
    ),
    MetricDef(
        "quote_found_rate",
        "Quote found in the archived page (L2 mechanical)",
        "citation with a quote",
        "metrics/select_passage_units",
        ("answers", "passage_checks"),
        "quotes located at their offset, elsewhere in the page, or after normalization",
        "quotes located, shifted, normalized or absent",
        "quotes whose page text could not be read (verdict unresolved)",
    ),
    MetricDef(
        "full_support_rate",
        "Full-support rate (L2, support rubric)",
        "claim-citation pair",
        "metrics/select_support_units",
        ("answers", "support_labels"),
        "pairs adjudicated fully_supported",
        "accessible reviewed pairs: fully, partially, unsupported or contradicted (partial and "
        "contradicted are in the denominator, never in the numerator)",
        "pairs adjudicated unresolved (evidence not accessible, or an annotator tie) and "
        "pairs labelled by a grader alone (no human review)",
    ),
    MetricDef(
        "citation_precision",
        "Citation precision, fail-closed (Liu et al.'s counting, unresolved set aside)",
        "claim-citation pair",
        "metrics/select_precision_units",
        ("answers", "support_labels", "claim_labels"),
        "pairs whose citation fully supports its claim, or partially supports it when the "
        "claim's citations together fully support it and no single one does (Liu et al.'s "
        "rule for partial citations)",
        "human-reviewed pairs with a resolved label: fully, partially, unsupported or "
        "contradicted (a partial pair only when the claim's combined support is resolved)",
        "pairs adjudicated unresolved (evidence inaccessible, unclear, annotator tie), partial "
        "pairs of a claim whose combined support is unresolved, and grader-only labels. Liu "
        "et al. count the unresolved as not supporting: see Citation precision (Liu et al. "
        "2023) for the paper's number",
    ),
    MetricDef(
        "citation_recall",
        "Citation recall, fail-closed (unresolved set aside)",
        "verification-worthy claim",
        "metrics/select_recall_units",
        ("answers", "claims", "claim_labels"),
        "verification-worthy claims whose citations together fully support them",
        "verification-worthy claims that are uncited (count as not supported) or whose "
        "reviewed citations resolve the claim",
        "claims whose worthiness is unknown, cited claims with no reviewed pair, and claims "
        "whose best reviewed label is unresolved (e.g. citations that contradict each "
        "other). When only a sample of pairs is reviewed, uncited claims are always resolved "
        "and cited ones only when reviewed, so the rate leans low: read it with its "
        "unresolved count and the coverage metric",
    ),
    MetricDef(
        "liu_citation_recall",
        "Citation recall (Liu et al. 2023)",
        "verification-worthy claim",
        "metrics/select_liu_recall_units",
        ("answers", "claims", "claim_labels"),
        "verification-worthy statements whose citations together fully support them (Liu et "
        "al. 2023, §2.3)",
        "every verification-worthy statement with a human judgment or no citation: a "
        "statement with no citation counts as not supported, and so does every judgment "
        "other than full support, including unresolved ones (\"Citations Contradict Each "
        "Other\")",
        "only statements whose worthiness is unknown and cited statements with no human "
        "judgment (not reviewed, or graded by a model alone)",
        definition="liu2023",
    ),
    MetricDef(
        "liu_citation_precision",
        "Citation precision (Liu et al. 2023)",
        "claim-citation pair",
        "metrics/select_liu_precision_units",
        ("answers", "support_labels", "claim_labels"),
        "T_fs + T_ps: citations that fully support their statement, plus citations that "
        "partially support it when the statement is fully supported by the union of its "
        "citations and no single citation fully supports it (Liu et al. 2023, §2.4)",
        "N: every human-judged citation; unresolved ones (\"Citation Inaccessible\", "
        "\"Statement is Unclear\", an annotator tie) count as not supporting",
        "only citations with no human judgment (grader-only labels)",
        definition="liu2023",
    ),
    MetricDef(
        "liu_citation_f1",
        "Citation F1 (Liu et al. 2023)",
        "precision and recall of the same answers",
        "",
        ("answers", "claims", "support_labels", "claim_labels"),
        "2 · precision · recall",
        "precision + recall, both under Liu et al.'s definitions, pooled over the row's "
        "answers (the rows of Citation precision and Citation recall (Liu et al. 2023))",
        "as in its two components",
        kind="f1",
        definition="liu2023",
        components=("liu_citation_precision", "liu_citation_recall"),
    ),
    MetricDef(
        "expertqa_attribution",
        "Claims with complete attribution (ExpertQA)",
        "claim",
        "metrics/select_expertqa_attribution_units",
        ("answers", "support_judgments"),
        "claims the expert labelled Complete (ExpertQA's own support label, not our mapping)",
        "claims labelled Complete, Partial, Incomplete or Missing",
        "claims labelled N/A (no judgment of support) and claims whose annotators disagree",
        definition="expertqa",
    ),
    MetricDef(
        "verification_coverage",
        "Coverage of verification-worthy claims (support rubric)",
        "verification-worthy claim",
        "metrics/select_coverage_units",
        ("answers", "claims"),
        "verification-worthy claims with at least one citation",
        "claims marked verification-worthy",
        "claims whose verification_worthy flag is null (unknown)",
    ),
    MetricDef(
        "metadata_mismatch_rate",
        "Metadata mismatch rate (L3)",
        "citation with scholarly metadata",
        "metrics/select_metadata_mismatch_units",
        ("answers", "metadata_checks"),
        "records whose registry metadata disagree (title, author, year or venue)",
        "records the registry found: consistent or mismatch (not_found has its own rate)",
        "records that are unmatched or unresolved (nothing to look up, registry unreachable)",
        higher_is_better=False,
    ),
    MetricDef(
        "metadata_not_found_rate",
        "Identifier not found rate (L3)",
        "citation with scholarly metadata",
        "metrics/select_metadata_not_found_units",
        ("answers", "metadata_checks"),
        "identifiers the registry answered 404 for (fabricated identifier)",
        "records the registry answered for: consistent, mismatch or not_found",
        "records that are unmatched or unresolved",
        higher_is_better=False,
    ),
    MetricDef(
        "omission_rate",
        "Material-relationship omission rate (source-risk R_O)",
        "(query, source, answer) tuple",
        "metrics/select_omission_units",
        ("answers", "omission_endpoints"),
        "resolved tuples with R_O = 1 (relationship material and not disclosed)",
        "tuples whose R_O is resolved (0 or 1)",
        "tuples with R_O null (a predicate unresolved): complete-case coverage is reported "
        "as its own metric",
        higher_is_better=False,
    ),
    MetricDef(
        "omission_complete_case_coverage",
        "Omission complete-case coverage",
        "(query, source, answer) tuple",
        "metrics/select_omission_coverage_units",
        ("answers", "omission_endpoints"),
        "tuples whose R_O is resolved",
        "every current tuple",
        "none (this is the share of resolved tuples)",
    ),
    MetricDef(
        "fail_closed_rejection_rate",
        "Fail-closed rejection rate (fail-closed rule)",
        "answer",
        "metrics/select_rejection_units",
        ("answers", "answer_checks"),
        "answers rejected by the citation checks (missing, malformed or hallucinated "
        "citation): never served",
        "accepted answers the checks settle (verified or rejected)",
        "answers whose only open question is an uncited sentence of unknown worthiness in an "
        "answer that declares no context (the rule does not apply to it: never a rejection, "
        "never a pass)",
        higher_is_better=False,
    ),
    MetricDef(
        "input_rejection_rate",
        "Rejected input lines",
        "answer line",
        "metrics/select_input_rejection_units",
        ("answers", "rejected_inputs"),
        "input lines rejected at ingestion (bad JSON, missing or mistyped field, duplicate)",
        "input lines: accepted answers plus rejected lines",
        "none",
        weighted=False,
        overall_only=True,
        higher_is_better=False,
    ),
    MetricDef(
        "cost_per_served_answer",
        "Tokens per served answer (fail-closed rule)",
        "served answer",
        "metrics/select_cost_units",
        ("answers", "answer_checks"),
        "tokens (input + output) of verified, served answers",
        "served answers with a recorded cost",
        "served answers without a recorded cost (never counted as zero)",
        kind="mean",
        weighted=False,
        higher_is_better=False,
    ),
)

BY_NAME: dict[str, MetricDef] = {m.name: m for m in METRICS}

# Whose definition a metric follows (MetricDef.definition), in words.
DEFINITIONS: dict[str, str] = {
    "project": "ours, fail-closed: unresolved units are set aside and counted beside the rate",
    "liu2023": "Liu, Zhang & Liang (2023), Evaluating Verifiability in Generative Search "
    "Engines, §2.3-2.4, computed as the paper does (unresolved judgments count as not "
    "supporting), pooled over the row's answers",
    "expertqa": "ExpertQA (Malaviya et al. 2024): the share of claims whose expert label is "
    "Complete among labelled claims, on the source's own labels",
}

# The interval methods, in words, for the report's definitions section.
METHODS: dict[str, str] = {
    "wilson": "Wilson score interval on the unweighted counts (statsmodels); used for "
    "unweighted metrics and for rows whose units are one per query with one design weight, "
    "where the weighted and unweighted rates coincide. Coverage checked by simulation.",
    "hajek_wilson": "Design-weighted (Hájek) rate, weight 1/inclusion_prob of the answer, with "
    "a Wilson interval on an effective sample size fixed by the design: Kish's (sum w)²/sum w² "
    "over the row's units (the loss from unequal weights) divided by the design effect of "
    "clustering by query (a query's citations, claims and answers from several engines move "
    "together), kept between Kish's size over the queries and over the units. The design "
    "effect is estimated once per metric over all its units (clustered over unclustered "
    "linearized variance, at least 1) and applied to every row. So a row's interval rises "
    "with every success and 0% or 100% get the same effective size as 1 failure or 1 "
    "success. Coverage checked by simulation on clustered unequal-probability samples "
    "(2,000 each: 95-98%, also for rare events where a symmetric interval under-covers). A "
    "row with one query has no interval (reason no_interval): its variance cannot be "
    "estimated.",
    "f1_cluster_bootstrap": "F1 of the pooled precision and recall; its interval is a "
    "percentile bootstrap resampling whole queries (both components move together; "
    "2,000 replicates, fixed seed). One query: no interval.",
    "hajek_linearized": "Tokens per served answer: the plain mean with a t interval.",
    "domain_bootstrap": "Sensitivity interval beside weighted rates that span several domains: "
    "percentile cluster bootstrap resampling whole domains (2,000 replicates, fixed seed). It "
    "shows how far the rate moves when the domain mix does; with few domains it is unstable "
    "and is not the reported 95% interval.",
}
