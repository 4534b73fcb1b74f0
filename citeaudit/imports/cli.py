"""The ``citeaudit import {liu,expertqa} PATH --out DIR`` subcommand."""

from __future__ import annotations

import argparse
import json
from datetime import date
from pathlib import Path

from citeaudit.imports import expertqa, liu

IMPORTERS = {"liu": liu, "expertqa": expertqa}


def _date(text: str) -> str:
    try:
        return date.fromisoformat(text).isoformat()
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a YYYY-MM-DD date: {text!r}") from exc


def _cmd(args: argparse.Namespace) -> int:
    module = IMPORTERS[args.dataset]
    result = module.import_file(args.path, args.out, args.date or module.DEFAULT_DATE)
    print(json.dumps(result, sort_keys=True))
    print(f"next: citeaudit run --raw {args.out} --derived <DERIVED>")
    return 0


def register_cli(subparsers: argparse._SubParsersAction) -> None:
    """Add ``import`` to a ``citeaudit`` argument parser."""
    p = subparsers.add_parser(
        "import",
        help="import real human-annotated data (Liu et al. 2023, ExpertQA) into a raw folder",
        description="Write answers/<date>/*.jsonl, annotations/support/*.csv, "
                    "annotations/annotators.csv and codebooks/v1.yaml under --out from a Liu "
                    "et al. (2023) JSON file or an ExpertQA JSONL file.",
    )
    p.add_argument("dataset", choices=sorted(IMPORTERS))
    p.add_argument("path", type=Path, help="the source file")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="raw folder to write")
    p.add_argument("--date", type=_date, metavar="YYYY-MM-DD",
                   help="observation date for the answers (the sources hold none; default: "
                        f"liu {liu.DEFAULT_DATE}, expertqa {expertqa.DEFAULT_DATE})")
    p.set_defaults(func=_cmd)
