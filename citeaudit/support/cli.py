"""``citeaudit validate-grader expertqa PATH``: the evidence locator against expert labels."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from citeaudit import codebook


def _fmt(value: tuple) -> str:
    if len(value) == 1:
        return str(value[0])
    est, lo, hi = value
    if est is None or math.isnan(est):
        return "n/a"
    return f"{est:.3f} [{lo:.3f}, {hi:.3f}]"


def _table(title: str, groups: dict[str, dict], keys: list[str]) -> list[str]:
    lines = [title, "| group | " + " | ".join(keys) + " |",
             "|---" * (len(keys) + 1) + "|"]
    for name, figures in groups.items():
        lines.append(f"| {name} | " + " | ".join(_fmt(figures[k]) for k in keys) + " |")
    return lines


def _cmd_validate(args: argparse.Namespace) -> int:
    from citeaudit.support import validate

    path = Path(args.path)
    if not path.is_file():
        print(f"error: {path}: no such file")
        return 2
    book = codebook.load(Path(args.codebook)) if args.codebook else codebook.validate(
        {"version": "defaults", "label_maps": {"expertqa": {"Complete": "fully_supported"}},
         "source_roles": {}, "priority_weights": {"w": 1.0},
         "policy": {"contextualize_above": 0.5}}, "(codebook defaults)")
    rep = validate.report(path, book)
    if args.json:
        print(json.dumps(rep, indent=1, default=str))
        return 0
    print(f"{rep['file']}: grader {rep['grader']}, codebook {rep['codebook']}, "
          f"questions calibration {rep['questions']['calibration']} / held-out "
          f"{rep['questions']['held_out']}")
    print("thresholds: " + ", ".join(f"{k} = {v:.3g}" for k, v in rep["thresholds"].items()))
    print("95% percentile bootstrap over questions, held-out half only.\n")
    print("\n".join(_table(
        "Decorative citations (Complete claim vs the evidence of another claim of its answer)",
        rep["decorative"], ["n_true", "n_swapped", "swapped_flagged", "true_passed",
                            "auc_locator", "auc_coverage", "baseline_swapped_flagged"])))
    print()
    print("\n".join(_table(
        "Expert labels (Complete vs Incomplete/Partial/Missing, claims with evidence)",
        rep["expert"], ["n", "n_complete", "ba_locator", "ba_all_located", "ba_length",
                        "auc_locator", "auc_coverage", "auc_length",
                        "auc_locator_minus_length"])))
    return 0


def register_cli(sub: argparse._SubParsersAction) -> None:
    """Add ``validate-grader`` to the ``citeaudit`` command line."""
    p = sub.add_parser(
        "validate-grader",
        help="measure the evidence locator against expert labels (held-out half)",
        description="Split ExpertQA by a stable hash of the question, report the evidence "
                    "locator's decorative-citation and Complete-vs-rest figures on the "
                    "held-out half with bootstrap 95%% intervals, beside baselines.")
    p.add_argument("dataset", choices=["expertqa"], help="dataset format")
    p.add_argument("path", help="ExpertQA JSONL (e.g. ../shared/corpora/annotations/"
                                "expertqa/domain_val.jsonl)")
    p.add_argument("--codebook", help="codebook YAML whose atomization/evidence sections to "
                                      "use (default: the codebook defaults)")
    p.add_argument("--json", action="store_true", help="print the full report as JSON")
    p.set_defaults(func=_cmd_validate)
