"""The codebook written by ``citeaudit import``: label maps for the imported schemas.

``liu2023`` (per-citation judgments of Liu, Zhang & Liang 2023) and ``expertqa`` (claim-level
judgments of ExpertQA, Malaviya et al. 2024) mapped onto seed 003's five labels. Judgment
calls, documented in docs/codebook.md:

* Liu "Completely Supports but Also Refutes" → contradicted: the passage conflicts with part of
  the statement, which seed 003 says must not be read as full support.
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
            "expertqa) mapped onto seed 003's five labels. Rows name their schema."
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
            "citation_recall": "Share of verification-worthy claims fully supported by their "
                               "citations taken together (Liu et al. 2023).",
            "citation_precision": "Share of citations that fully or partially support their "
                                  "claim (Liu et al. 2023).",
        },
    }
