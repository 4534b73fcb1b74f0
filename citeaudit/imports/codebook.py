"""The codebook written by ``citeaudit import``: label maps for the imported schemas.

``liu2023`` (per-citation judgments of Liu, Zhang & Liang 2023) and ``expertqa`` (claim-level
judgments of ExpertQA, Malaviya et al. 2024) mapped onto the five labels of the support rubric
(docs/references.md#support-rubric). Judgment calls, documented in docs/codebook.md:

* Liu "Completely Supports but Also Refutes" → contradicted: the passage conflicts with part of
  the statement, which the support rubric says must not be read as full support.
* Liu statement level (schema ``liu2023_statement``, claim-level rows): "Yes" (the citations
  together fully support the statement) → fully_supported, "No" → unsupported, "Citations
  Contradict Each Other" → unresolved (the evidence does not settle the claim).
* Liu "Citation Inaccessible" and "Statement is Unclear" → unresolved (evidence cannot be
  accessed or assessed), never unsupported.
* ExpertQA "Incomplete" and "Partial" → partially_supported; "Missing" (the claim has no
  evidence at all) → unsupported; "N/A" → unresolved.
"""

from __future__ import annotations

VERSION = "v1"

LIU2023 = {
    "Citation Completely Supports Statement": "fully_supported",
    "Citation Partially Supports Statement": "partially_supported",
    "Citation Provides No Support for Statement": "unsupported",
    "Citation Completely Supports but Also Refutes Statement": "contradicted",
    "Citation Inaccessible": "unresolved",
    "Statement is Unclear, Can't Make Judgment": "unresolved",
}
# Liu et al.'s statement-level question: do the statement's citations, together, fully
# support it? "Citations Contradict Each Other" leaves the claim unsettled: unresolved.
LIU2023_STATEMENT = {
    "Yes": "fully_supported",
    "No": "unsupported",
    "Citations Contradict Each Other": "unresolved",
}
EXPERTQA = {
    "Complete": "fully_supported",
    "Partial": "partially_supported",
    "Incomplete": "partially_supported",
    "Missing": "unsupported",
    "N/A": "unresolved",
}
HIGH_RISK = ["Healthcare / Medicine", "Law", "health", "finance", "legal"]


def import_codebook() -> dict:
    """The import codebook as a plain dict (the YAML file's content)."""
    return {
        "version": VERSION,
        "description": (
            "Codebook of imported real annotations: Liu et al. (2023) per-citation support "
            "labels (schema liu2023) and ExpertQA claim-level support labels (schema "
            "expertqa) mapped onto the support rubric's five labels. Rows name their schema."
        ),
        "label_maps": {"liu2023": dict(LIU2023),
                       "liu2023_statement": dict(LIU2023_STATEMENT),
                       "expertqa": dict(EXPERTQA)},
        "source_roles": {
            "first_party": {"requires_disclosure": True},
            "affiliate": {"requires_disclosure": True},
            "sponsored": {"requires_disclosure": True},
            "independent": {"requires_disclosure": False},
            "user_generated": {"requires_disclosure": False},
        },
        "priority_weights": {"d_Q": 0.25, "d_R": 0.25, "d_H": 0.25, "d_E": 0.25},
        "policy": {"contextualize_above": 0.5, "review_unresolved": True, "abstain_rules": []},
        "high_risk_domains": list(HIGH_RISK),
        "alignment_window": {"before_days": 7, "after_days": 1},
        "tracking_params": ["utm_*", "fbclid", "gclid", "dclid", "msclkid", "mc_eid", "mc_cid",
                            "_ga", "yclid", "igshid", "ref_src"],
        "review_sampling": {"supported_rate": 0.1, "seed": 7},
        "metrics": {
            "liu_citation_recall": "Definition: Liu et al. 2023 (§2.3). Verification-worthy "
                                   "statements whose citations together fully support them, "
                                   "over all verification-worthy statements; uncited, No and "
                                   "Citations Contradict Each Other count as not supported.",
            "liu_citation_precision": "Definition: Liu et al. 2023 (§2.4). (T_fs + T_ps) / N "
                                      "over the judged citations: a partial citation counts "
                                      "only when the statement is fully supported by the "
                                      "union of its citations and none supports it alone; "
                                      "inaccessible and unclear citations count as not "
                                      "supporting.",
            "liu_citation_f1": "Definition: Liu et al. 2023. Harmonic mean of the two above.",
            "citation_recall": "Definition: ours, fail-closed. Liu et al.'s recall with "
                               "unresolved statements (Citations Contradict Each Other) set "
                               "aside and counted beside.",
            "citation_precision": "Definition: ours, fail-closed. Liu et al.'s counting of "
                                  "partial citations, with inaccessible and unclear citations "
                                  "set aside and counted beside.",
            "expertqa_attribution": "Definition: ExpertQA (Malaviya et al. 2024). Claims "
                                    "labelled Complete among claims labelled Complete, "
                                    "Partial, Incomplete or Missing; N/A counted beside.",
        },
    }
