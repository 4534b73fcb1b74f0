"""``citeaudit validate-grader expertqa|liu|project``, ``review``, ``sample``: graders against
people's labels, the Label Studio round trip and the review sample's draw."""

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


def print_report(rep: dict) -> None:
    """The held-out tables of a ``validate.report`` as text (what ``validate-grader`` prints)."""
    print(f"{rep['file']}: grader {rep['grader']}, codebook {rep['codebook']}, "
          f"questions calibration {rep['questions']['calibration']} / held-out "
          f"{rep['questions']['held_out']}")
    print("thresholds: " + ", ".join(f"{k} = {v:.3g}" for k, v in rep["thresholds"].items()))
    print("95% percentile bootstrap over questions, held-out half only.\n")
    print("\n".join(_table(
        "Decorative citations (Complete claim vs the evidence of another claim of its answer)",
        rep["decorative"], ["n_true", "n_swapped", "grader_swapped_flagged",
                            "grader_true_passed", "auc_grader", "swapped_flagged",
                            "true_passed", "auc_locator", "auc_coverage",
                            "baseline_swapped_flagged"])))
    print()
    print("\n".join(_table(
        "Expert labels (Complete vs Incomplete/Partial/Missing, claims with evidence)",
        rep["expert"], ["n", "n_complete", "ba_locator", "ba_all_located", "ba_length",
                        "auc_locator", "auc_coverage", "auc_length",
                        "auc_locator_minus_length"])))


def print_labels(title: str, groups: dict[str, dict]) -> None:
    """A grader's agreement with people: per group n, balanced accuracy, kappa; the overall
    confusion matrix (share of each human label's row)."""
    print("\n".join(_table(title, groups, ["n", "balanced_accuracy", "cohen_kappa"])))
    cells = {k: v for k, v in groups.get("overall", {}).items() if k.startswith("human=")}
    if cells:
        print("\nconfusion (overall; share of the human label's row):")
        for k, v in cells.items():
            print(f"  {k}: {_fmt(v)}")


def print_liu(rep: dict) -> None:
    """The Liu et al. validation (``validate_liu.report``) as text, its limits first."""
    print(f"{rep['file']}: grader {rep['label_grader']} (evidence locator {rep['grader']}), "
          f"codebook {rep['codebook']}; {rep['answers']} answers, {rep['judgments']} "
          f"(statement, citation) judgments, {rep['gradeable']} gradeable; queries "
          f"calibration {rep['questions']['calibration']} / held-out "
          f"{rep['questions']['held_out']} (of the gradeable pairs)")
    print(f"BIASED SUBSET: {rep['bias_note']} ({rep['answers_with_refuting_citation']} of "
          f"{rep['answers']} answers here have such a citation.)")
    print(f"LIMITS: {rep['limits']}")
    print("95% percentile bootstrap over queries.\n")
    print("Judgments by label (a pair is gradeable when it has evidence and a Complete or "
          "Partial label):")
    print("| label | judged | gradeable | not gradeable (reason) |\n|---|---|---|---|")
    for label, c in rep["not_gradeable"].items():
        why = ", ".join(f"{k} {v}" for k, v in c.items() if k not in ("judged", "gradeable"))
        print(f"| {label} | {c['judged']} | {c['gradeable']} | {why or '-'} |")
    print(f"\npairs: {rep['pairs']['true']} true, {rep['pairs']['swapped']} swapped, "
          f"{rep['pairs']['without_grader_label']} without a grader label")
    print("thresholds (calibration half): " + ", ".join(
        f"{k} = {v:.3g}" for k, v in rep["thresholds"].items()))
    print()
    print("\n".join(_table(
        "Decorative citations, evidence locator scores (Complete statement vs another "
        "statement's evidence of its answer), held-out half", rep["decorative"],
        ["n_true", "n_swapped", "grader_swapped_flagged", "grader_true_passed", "auc_grader",
         "swapped_flagged", "true_passed", "auc_locator", "auc_coverage",
         "baseline_swapped_flagged"])))
    print()
    print("\n".join(_table(
        f"Decorative citations, grader {rep['label_grader']}'s labels (flagged = partially "
        "supported, unsupported or contradicted; unresolved apart; no cut learned here), all "
        "answers", rep["decorative_labels"],
        ["n_true", "n_swapped", "swapped_flagged", "true_passed", "swapped_unresolved",
         "true_unresolved"])))
    print()
    print("\n".join(_table(
        "Complete vs Partial, evidence locator scores (pairs with evidence), held-out half",
        rep["expert"], ["n", "n_complete", "ba_locator", "ba_all_located", "ba_length",
                        "auc_locator", "auc_coverage", "auc_length",
                        "auc_locator_minus_length"])))
    print()
    print_labels(f"Grader {rep['label_grader']}'s label vs the annotators' (Complete → "
                 "fully_supported, Partial → partially_supported), pairs with evidence; overall = "
                 "all answers (the grader learned nothing on this file)",
                 rep["labels"])


def _cmd_validate(args: argparse.Namespace) -> int:
    from citeaudit.support import judge, validate

    if args.dataset == "project":
        try:
            rep = validate.project_report(Path(args.path), args.version, args.grader)
        except FileNotFoundError as exc:
            print(f"error: {exc}")
            return 2
        if args.json:
            print(json.dumps(rep, indent=1, default=str))
            return 0
        print(f"{rep['derived']}: grader {rep['grader']} vs adjudicated human labels, "
              f"codebook {rep['codebook']}: {rep['pairs']} labelled pairs, {rep['held_out']} "
              "on the held-out half (SHA-256 of the claim id); 95% bootstrap over answers.\n")
        print_labels("Grader label vs human label", rep["labels"])
        return 0
    path = Path(args.path)
    if not path.is_file():
        print(f"error: {path}: no such file")
        return 2
    book = codebook.load(Path(args.codebook)) if args.codebook else codebook.validate(
        {"version": "defaults", "label_maps": {"expertqa": {"Complete": "fully_supported"}},
         "source_roles": {}, "priority_weights": {"w": 1.0},
         "policy": {"contextualize_above": 0.5}}, "(codebook defaults)")
    try:
        if args.dataset == "liu":
            from citeaudit.support import validate_liu

            rep = validate_liu.report(path, book, args.grader)
        else:
            rep = validate.report(path, book, args.grader)
    except judge.JudgeConfigError as exc:
        print(f"error: {exc}")
        return 2
    if args.json:
        print(json.dumps(rep, indent=1, default=str))
        return 0
    if args.dataset == "liu":
        print_liu(rep)
        return 0
    print_report(rep)
    print()
    print_labels(f"Grader {rep['label_grader']}'s label vs the expert's (Complete → "
                 "fully_supported, Partial/Incomplete → partially_supported, Missing → "
                 "unsupported), held-out true pairs", rep["labels"])
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from citeaudit import parquet_io
    from citeaudit.support import review

    raw, derived = Path(args.raw), Path(args.derived)
    try:
        book = codebook.load_version(raw, args.codebook)
        claims = parquet_io.read_partition(derived, "claims", {"observation_date": args.date})
        tasks = review.export_tasks(derived, args.date, book, dict(zip(
            claims.column("claim_id").to_pylist(), claims.column("text").to_pylist(),
            strict=True)))
    except (codebook.CodebookError, FileNotFoundError) as exc:
        print(f"error: {exc}")
        return 2
    out = Path(args.out)
    review.write_atomic(out, json.dumps(tasks, ensure_ascii=False, indent=1) + "\n")
    config = out.with_name(out.stem + ".label_config.xml")
    review.write_atomic(config, review.label_config(book))
    print(f"{len(tasks)} tasks -> {out} (labeling config: {config})")
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    from citeaudit.support import review

    try:
        summary = review.import_export(Path(args.export), Path(args.raw))
    except review.ExportError as exc:
        print(f"error: {args.export}: rejected, nothing written:")
        for reason in exc.reasons:
            print(f"  {reason}")
        return 2
    except OSError as exc:
        print(f"error: {exc}")
        return 2
    print(f"{summary['rows']} annotation rows from {summary['tasks']} tasks -> "
          f"{summary['file']} ({summary['cancelled']} cancelled annotations not imported)")
    return 0


def _cmd_sample(args: argparse.Namespace) -> int:
    from citeaudit import parquet_io
    from citeaudit.support import review
    from citeaudit.support import sample as sample_mod

    raw, derived = Path(args.raw), Path(args.derived)
    try:
        book = codebook.load_version(raw, args.codebook)
        by = sample_mod.parse_by(args.by)
        grader = args.grader or book.graders.primary
        part = {"observation_date": args.date, "codebook": book.version}
        graded = parquet_io.read_optional(derived, "grader_judgments", part)
        if graded is None:
            print(f"error: {derived}: no grader_judgments for {args.date} × codebook "
                  f"{book.version}: run the pipeline first (citeaudit run --date {args.date})")
            return 2
        path = sample_mod.sample_path(raw, args.date, book.version)
        if path.is_file() and not args.replace:
            print(f"error: {path} exists (people may be labelling it): pass --replace to "
                  "draw again (labels already made stay; pairs no longer drawn become "
                  "'outside the sample')")
            return 2
        frame = sample_mod.frame(graded, grader)
        drawn = sample_mod.draw(frame, args.n, by, args.allocation, args.seed, args.date,
                                book.version, grader)
    except (codebook.CodebookError, sample_mod.SampleError) as exc:
        print(f"error: {exc}")
        return 2
    sample_mod.write(drawn, path)
    strata = {}
    for r in drawn.to_pylist():
        strata[r["stratum"]] = (r["stratum_sample"], r["stratum_size"])
    print(f"{drawn.num_rows} of {frame.num_rows} pairs drawn ({len(strata)} strata, "
          f"{args.allocation} allocation, seed {args.seed}) -> {path}")
    for h, (n_h, big) in sorted(strata.items()):
        print(f"  {h}: {n_h} of {big} (inclusion probability {n_h / big:.3f})")
    if args.out:
        claims = parquet_io.read_partition(derived, "claims", {"observation_date": args.date})
        tasks = review.export_sample_tasks(derived, args.date, book, drawn, dict(zip(
            claims.column("claim_id").to_pylist(), claims.column("text").to_pylist(),
            strict=True)))
        out = Path(args.out)
        review.write_atomic(out, json.dumps(tasks, ensure_ascii=False, indent=1) + "\n")
        config = out.with_name(out.stem + ".label_config.xml")
        review.write_atomic(config, review.label_config(book))
        print(f"{len(tasks)} Label Studio tasks -> {out} (labeling config: {config}); "
              "import the export with citeaudit review import")
    return 0


def register_cli(sub: argparse._SubParsersAction) -> None:
    """Add ``validate-grader`` and ``review export|import`` to the ``citeaudit`` command line."""
    rv = sub.add_parser("review", help="Label Studio round trip: export the review queue as "
                                       "tasks, import a Label Studio JSON export")
    rsub = rv.add_subparsers(dest="review_command", required=True, metavar="ACTION")
    ex = rsub.add_parser("export", help="write the review queue of a date × codebook as Label "
                                        "Studio tasks (and a labeling config beside them)")
    ex.add_argument("--date", required=True, help="observation date YYYY-MM-DD")
    ex.add_argument("--codebook", required=True, help="codebook version (e.g. v1)")
    ex.add_argument("--out", required=True, help="tasks JSON file to write")
    ex.add_argument("--raw", default="data/raw", help="raw folder (default: data/raw)")
    ex.add_argument("--derived", default="data/derived",
                    help="derived folder (default: data/derived)")
    ex.set_defaults(func=_cmd_export)
    im = rsub.add_parser("import", help="turn a Label Studio JSON export into "
                                        "annotations/support/label-studio-<digest>.csv")
    im.add_argument("export", help="Label Studio JSON export file")
    im.add_argument("--raw", default="data/raw", help="raw folder (default: data/raw)")
    im.set_defaults(func=_cmd_import)

    sp = sub.add_parser(
        "sample",
        help="draw the pairs people should label (stratified random, fixed seed) and export "
             "them to Label Studio with their inclusion probabilities",
        description="Draw a stratified random sample of the graded claim-citation pairs of a "
                    "date x codebook (the frame: grader_judgments of the codebook's primary "
                    "grader), write it with each pair's inclusion probability to "
                    "RAW/annotations/samples/DATE/CODEBOOK.csv and, with --out, as Label "
                    "Studio tasks. The labels people make on it give the design-based "
                    "human-only and prediction-powered support rates (docs/graders.md).")
    sp.add_argument("--date", required=True, help="observation date YYYY-MM-DD")
    sp.add_argument("--n", type=int, required=True, help="how many pairs to draw")
    sp.add_argument("--codebook", default="v1", help="codebook version (default: v1)")
    sp.add_argument("--by", default="",
                    help="stratify by these keys, comma-separated: engine, domain, "
                         "grader_label (default: no strata, a simple random sample)")
    sp.add_argument("--allocation", default="proportional", choices=["proportional", "neyman"],
                    help="proportional to stratum size, or Neyman (size x spread of the "
                         "grader's labels); at least 2 per stratum either way")
    sp.add_argument("--seed", type=int, default=20261101, help="the draw's seed")
    sp.add_argument("--grader", help="the grader whose labels make the frame and the "
                                     "grader_label strata (default: the codebook's primary)")
    sp.add_argument("--replace", action="store_true",
                    help="draw again over an existing sample of the date x codebook")
    sp.add_argument("--out", help="also write the sample as Label Studio tasks (JSON) here")
    sp.add_argument("--raw", default="data/raw", help="raw folder (default: data/raw)")
    sp.add_argument("--derived", default="data/derived",
                    help="derived folder (default: data/derived)")
    sp.set_defaults(func=_cmd_sample)

    p = sub.add_parser(
        "validate-grader",
        help="measure a grader against people's labels (held-out half)",
        description="expertqa PATH: split ExpertQA by a stable hash of the question, report "
                    "the evidence locator's decorative-citation and Complete-vs-rest figures "
                    "on the held-out half beside baselines, and the grader's labels against "
                    "the experts'. project DERIVED: the grader's labels (grader_judgments) "
                    "against the project's adjudicated human labels, held-out half of the "
                    "claims. liu PATH: Liu et al.'s intrinsic_halls.json, pairs with the "
                    "annotators' evidence sentence as the page (decorative-citation swap "
                    "test, Complete vs Partial; pairs without evidence counted, not graded). "
                    "Balanced accuracy, Cohen's kappa and the confusion matrix, each "
                    "with a bootstrap 95%% interval.")
    p.add_argument("dataset", choices=["expertqa", "liu", "project"], help="labelled set")
    p.add_argument("path", help="ExpertQA JSONL (e.g. ../shared/corpora/annotations/"
                                "expertqa/domain_val.jsonl), Liu et al.'s "
                                "intrinsic_halls.json, or the derived folder (project)")
    p.add_argument("--grader", default="locator", choices=["locator", "llm"],
                   help="the grader to validate (llm: the judge configured by "
                        "CITEAUDIT_JUDGE_BASE_URL and CITEAUDIT_JUDGE_MODEL)")
    p.add_argument("--version", default="v1",
                   help="project: the codebook version whose labels to read (default v1)")
    p.add_argument("--codebook", help="codebook YAML whose atomization/evidence sections to "
                                      "use (default: the codebook defaults)")
    p.add_argument("--json", action="store_true", help="print the full report as JSON")
    p.set_defaults(func=_cmd_validate)
