"""The ``citeaudit demo-corpus`` subcommand."""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import date
from pathlib import Path

DESCRIPTION = """\
Generate a realistic, deterministic demo corpus for the audit pipeline under OUT:

  answers/<date>/<engine>.jsonl        answers of 4 engines (perplexity, copilot,
                                       google_ai_overview, inhouse_rag) to a daily query panel
  warc/<crawl date>/crawl-<n>.warc.gz  captures of every cited page, crawled the day before,
                                       on each observation day and the day after
  annotations/support/<date>.csv       2-3 human annotators (and a grader) per sampled citation
  annotations/source_risk/<date>.jsonl seed-000 tuple judgments (predicates I, A, M, D)
  codebooks/v1.yaml, v2.yaml           two codebook versions (v2 remaps `partial`)
  ground_truth.json                    every planted defect and the verdicts the pipeline
                                       must reproduce exactly
  ground_truth_support.csv             the planted support truth of every clean citation
                                       (what the annotators, and make demo's judge
                                       stand-in, label from)

Same arguments give byte-identical files. Defects are planted at known rates (malformed
JSON, missing fields, wrong types, bad spans and timestamps, duplicate ids; uncited claims,
malformed and hallucinated citations; redirects, dead and changed pages, revisits, one
truncated WARC record), each at least once.
"""

EPILOG = """\
examples:
  citeaudit demo-corpus --out data/raw
  citeaudit demo-corpus --out /tmp/bench --answers 100000 --days 3     # several GB of WARC
  citeaudit demo-corpus --out /tmp/liu \
      --queries ../shared/corpora/queries/liu-verifiability/allsouls.jsonl
"""


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a YYYY-MM-DD date: {text!r}") from exc


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def register_cli(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``demo-corpus`` subcommand to a ``citeaudit`` argument parser."""
    p = subparsers.add_parser(
        "demo-corpus",
        help="generate a realistic demo corpus (answers, WARCs, annotations, ground truth)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--out", type=Path, default=Path("data/raw"), metavar="DIR",
                   help="output folder (default: data/raw)")
    p.add_argument("--seed", type=int, default=7, help="random seed (default: 7)")
    p.add_argument("--answers", type=_positive, default=600, metavar="N",
                   help="answers to generate, spread over days and engines (default: 600)")
    p.add_argument("--days", type=_positive, default=3, metavar="N",
                   help="observation days (default: 3)")
    p.add_argument("--start-date", type=_date, default=date(2026, 11, 1), metavar="YYYY-MM-DD",
                   help="first observation date (default: 2026-11-01)")
    p.add_argument("--queries", type=Path, metavar="FILE",
                   help="JSONL query panel (keys query or prompt_text) instead of the built-in "
                        "templates, e.g. ../shared/corpora/queries/liu-verifiability/*.jsonl")
    p.add_argument("--warc-max-mb", type=_positive, default=48, metavar="MB",
                   help="roll WARC files at this size (default: 48)")
    p.add_argument("--force", action="store_true",
                   help="replace existing answers/, warc/, annotations and codebooks in DIR even "
                        "if they were not written by demo-corpus")
    bar = p.add_mutually_exclusive_group()
    bar.add_argument("--progress", dest="progress", action="store_true", default=None,
                     help="show a progress bar on stderr (default: when stderr is a terminal)")
    bar.add_argument("--no-progress", dest="progress", action="store_false")
    p.add_argument("--json", action="store_true",
                   help="print the full summary (planted defects by kind) as JSON on stdout")
    p.set_defaults(func=run)


LABEL_DESCRIPTION = """\
The demo's people label its drawn review sample (citeaudit sample): for each drawn pair of
DATE x CODEBOOK that no one has labelled yet, two or three of the demo's registered annotators
judge it from the pair's planted truth (RAW/ground_truth_support.csv) with the same
disagreement as the rest of the demo's labels, written to
RAW/annotations/support/DATE_review_sample.csv. Then `citeaudit run --date DATE` shows the
support rate from the sample, human-only and prediction-powered. Demo corpora only: real
labels come from people (citeaudit sample --out tasks.json, then citeaudit review import).
"""


def register_label_cli(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``demo-label`` subcommand (the demo's annotators label the drawn sample)."""
    p = subparsers.add_parser(
        "demo-label", help="the demo's annotators label its drawn review sample (from the "
                           "planted truth, with their usual noise)",
        description=LABEL_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--raw", type=Path, default=Path("data/raw"), metavar="DIR",
                   help="the demo raw folder (default: data/raw)")
    p.add_argument("--date", type=_date, required=True, metavar="YYYY-MM-DD",
                   help="the sample's observation date")
    p.add_argument("--codebook", default="v1", help="the sample's codebook version (default v1)")
    p.add_argument("--seed", type=int, default=7, help="the annotators' noise (default 7)")
    p.set_defaults(func=run_label)


def run_label(args: argparse.Namespace) -> int:
    """Run ``demo-label``; prints what was labelled and where it was written."""
    from citeaudit.demo_corpus.annotations import label_sample

    try:
        summary = label_sample(args.raw, args.date.isoformat(), args.codebook, args.seed)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"demo annotators: {summary['drawn']} drawn pairs of {args.date} x codebook "
          f"{args.codebook}: {summary['already']} already labelled, {summary['labelled']} "
          f"labelled now ({summary['rows']} judgments) -> {summary['file']}"
          + (f" ({summary['defective']} of them citations with a planted defect: "
             "cannot_tell)" if summary["defective"] else ""))
    return 0


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; prints a one-line summary (or, with --json, the full one)."""
    from citeaudit.demo_corpus.generate import generate

    progress = sys.stderr.isatty() if args.progress is None else args.progress
    began = time.perf_counter()
    try:
        summary = generate(
            args.out, seed=args.seed, answers=args.answers, days=args.days,
            start_date=args.start_date, progress=progress, queries=args.queries,
            warc_max_bytes=args.warc_max_mb * 1024 * 1024,
            overwrite=True if args.force else None,
        )
    except FileExistsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    summary["seconds"] = round(time.perf_counter() - began, 2)
    if args.json:
        print(json.dumps(summary, indent=1, sort_keys=True))
        return 0
    planted = summary["planted_defects"]
    print(
        f"demo corpus in {args.out}: {summary['answer_lines']:,} answer lines "
        f"({sum(planted['rejected_lines'].values()):,} malformed on purpose), "
        f"{summary['claims']:,} claims, {summary['citations']:,} citations, "
        f"{summary['warc_records']:,} WARC records in {summary['warc_files']} files, "
        f"{summary['support_rows']:,} support judgments; "
        f"every planted defect is listed in {Path(args.out) / 'ground_truth.json'} "
        f"({summary['seconds']} s)"
    )
    return 0
