"""The two codebook versions the demo corpus ships, as plain data and as YAML files.

``v1`` maps the annotators' raw support labels one-to-one onto the five categories of the
support rubric (docs/references.md#support-rubric).
``v2`` is the revision a team makes after reviewing disagreements: it reads ``partial`` as
``unsupported`` (a claim that is only partly backed is not backed), tightens the
contextualisation threshold and reweights review priority. Backfilling by codebook must
therefore change support rates and priorities, and nothing else.
"""

from __future__ import annotations

from pathlib import Path

import yaml

TRACKING_PARAMS = ["utm_*", "fbclid", "gclid", "dclid", "msclkid", "mc_eid", "mc_cid", "_ga",
                   "yclid", "igshid", "ref_src"]
METRICS = {
    "citation_recall": (
        "Definition: ours, fail-closed. Share of verification-worthy claims whose citations, "
        "taken together, fully support the claim (Liu et al. 2023's counting). Claims with no "
        "citation count as not supported; unresolved support is reported beside the rate, "
        "never inside it."
    ),
    "citation_precision": (
        "Definition: ours, fail-closed. Share of citations that fully support their claim, or "
        "partially support it when the claim's citations together fully support it and no "
        "single one does (Liu et al. 2023's counting); unresolved citations are reported "
        "separately."
    ),
    "liu_citation_recall": (
        "Definition: Liu et al. 2023, as the paper computes it: unresolved judgments count "
        "as not supported."
    ),
    "liu_citation_precision": (
        "Definition: Liu et al. 2023, as the paper computes it: (T_fs + T_ps) / N, "
        "inaccessible or unclear citations count as not supporting."
    ),
    "full_support_rate": (
        "Fully supported pairs over accessible reviewed claim-citation pairs (the support rubric); "
        "partial and unresolved counts are shown beside it."
    ),
}


# The demo's alert rules (docs/comparisons.md): the planted regression (one engine's dead
# citations rise on the last date, demo_corpus.regression) must fire the first; the two engines
# generated alike (regression.NULL_PAIR) must not fire the second.
ALERTS = [
    {"name": "dead-citations-rise", "metric": "dead_rate", "engine": "*",
     "family": "vs_previous_date", "direction": "worse", "min_effect": 0.05, "alpha": 0.05,
     "severity": "error"},
    {"name": "copilot-vs-google-dead-citations", "metric": "dead_rate", "engine": "copilot",
     "versus": "google_ai_overview", "family": "engine_vs_engine", "direction": "either",
     "min_effect": 0.05, "alpha": 0.05, "severity": "warn"},
]


def codebook(version: str) -> dict:
    """The codebook of a version as a plain dict (the YAML file's content)."""
    support_map = {
        "supports": "fully_supported",
        "partial": "partially_supported",
        "no_support": "unsupported",
        "contradicts": "contradicted",
        "cannot_tell": "unresolved",
    }
    weights = {"d_Q": 0.375, "d_R": 0.25, "d_H": 0.25, "d_E": 0.125}
    policy = {"contextualize_above": 0.5, "review_unresolved": True, "abstain_rules": []}
    description = (
        "Demo codebook v1: raw support labels map one-to-one onto the support rubric's "
        "categories; source-role taxonomy and review priorities of the source-risk specification."
    )
    if version == "v2":
        support_map["partial"] = "unsupported"
        weights = {"d_Q": 0.25, "d_R": 0.25, "d_H": 0.375, "d_E": 0.125}
        policy = {"contextualize_above": 0.4, "review_unresolved": True, "abstain_rules": []}
        description = (
            "Demo codebook v2: after adjudication review, a partially supported claim counts as "
            "unsupported (partial -> unsupported); harm weighs more in review priority and the "
            "contextualisation threshold is lower."
        )
    elif version != "v1":
        raise ValueError(f"unknown demo codebook version {version!r}")
    return {
        "version": version,
        "description": description,
        "label_maps": {"demo_support": support_map},
        "source_roles": {
            "affiliate": {"requires_disclosure": True},
            "first_party": {"requires_disclosure": True},
            "sponsored": {"requires_disclosure": True},
            "independent": {"requires_disclosure": False},
            "user_generated": {"requires_disclosure": False},
        },
        "priority_weights": weights,
        "policy": policy,
        "high_risk_domains": ["health", "finance", "legal"],
        "alignment_window": {"before_days": 7, "after_days": 1},
        "tracking_params": list(TRACKING_PARAMS),
        "review_sampling": {"supported_rate": 0.1, "seed": 7},
        "scholarly": {"title_similarity": 90, "search_similarity": 85, "year_tolerance": 1,
                      "refresh_days": 30},
        "metrics": dict(METRICS),
        "alerts": [dict(rule) for rule in ALERTS],
    }


def write_codebooks(folder: Path) -> list[Path]:
    """Write ``v1.yaml`` and ``v2.yaml`` into ``folder``; returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for version in ("v1", "v2"):
        path = folder / f"{version}.yaml"
        header = f"# citeaudit demo codebook {version} (generated by `citeaudit demo-corpus`)\n"
        body = yaml.safe_dump(codebook(version), sort_keys=False, allow_unicode=True, width=96)
        path.write_text(header + body, encoding="utf-8", newline="\n")
        out.append(path)
    return out
