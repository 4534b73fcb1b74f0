"""``citeaudit import {liu,expertqa} PATH --out DIR`` and
``citeaudit import {openai,gemini,anthropic,perplexity} PATH... --out DIR``."""

from __future__ import annotations

import argparse
import json
from datetime import date
from pathlib import Path

from citeaudit.imports import engines, expertqa, liu

IMPORTERS = {"liu": liu, "expertqa": expertqa}


def _date(text: str) -> str:
    try:
        return date.fromisoformat(text).isoformat()
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a YYYY-MM-DD date: {text!r}") from exc


def _cmd(args: argparse.Namespace) -> int:
    if args.dataset in engines.FORMATS:
        missing = [p for p in args.path if not p.is_file()]
        if missing:
            print(f"error: no such file: {missing[0]}")
            return 2
        emptied: set[str] = set()
        for summary in engines.import_paths(args.dataset, args.path, args.out,
                                            engine=args.engine, observed_at=args.observed_at,
                                            label=args.label):
            print(json.dumps(summary, sort_keys=True))
            emptied.update(summary["dates_emptied"])
        for day in sorted(emptied):
            print(f"moved: answers/{day}/ holds no answer any more (re-imported onto another "
                  "date); the next `citeaudit run` removes that date's outputs")
        print(f"next: citeaudit run --raw {args.out} --derived <DERIVED>")
        return 0
    if len(args.path) != 1 or args.engine or args.observed_at or args.label:
        print(f"error: {args.dataset} takes one PATH and no --engine/--observed-at/--label")
        return 2
    module = IMPORTERS[args.dataset]
    result = module.import_file(args.path[0], args.out, args.date or module.DEFAULT_DATE)
    print(json.dumps(result, sort_keys=True))
    print(f"next: citeaudit run --raw {args.out} --derived <DERIVED>")
    return 0


def register_cli(subparsers: argparse._SubParsersAction) -> None:
    """Add ``import`` to a ``citeaudit`` argument parser."""
    p = subparsers.add_parser(
        "import",
        help="import engine API responses (openai, gemini, anthropic, perplexity) or real "
             "human-annotated data (liu, expertqa) into a raw folder",
        description="Engines: each PATH is one raw API response (JSON) or one a line (JSONL); "
                    "writes answers/<date>/*.jsonl, keeps the responses verbatim under "
                    "responses/<format>/<date>/ and writes what cannot be imported to "
                    "import_rejections/<date>/ (shown in rejected_inputs by `citeaudit run`). "
                    "liu/expertqa: writes answers, annotations/support/*.csv, "
                    "annotations/annotators.csv and codebooks/v1.yaml from a Liu et al. (2023) "
                    "JSON file or an ExpertQA JSONL file.",
    )
    p.add_argument("dataset", choices=sorted(IMPORTERS) + sorted(engines.FORMATS))
    p.add_argument("path", type=Path, nargs="+", help="the source file(s)")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="raw folder to write")
    p.add_argument("--date", type=_date, metavar="YYYY-MM-DD",
                   help="observation date for the answers (the sources hold none; default: "
                        f"liu {liu.DEFAULT_DATE}, expertqa {expertqa.DEFAULT_DATE})")
    p.add_argument("--engine", metavar="NAME",
                   help="engine name on the answers (default: the format, e.g. openai)")
    p.add_argument("--observed-at", metavar="T",
                   help="RFC 3339 time the answers were observed (default: the response's "
                        "creation time; Anthropic and AI Studio Gemini responses carry none)")
    p.add_argument("--label", metavar="VERSION",
                   help="the answering system's version (a model update, a retrieval change), "
                        "written as the answers' system_version: `citeaudit compare` then "
                        "compares versions before vs after on the same queries (vs_version)")
    p.set_defaults(func=_cmd)
