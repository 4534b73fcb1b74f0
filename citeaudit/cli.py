"""``citeaudit``: the command line of the audit pipeline.

citeaudit demo-corpus --out data/raw          generate a realistic demo corpus
citeaudit run [--raw DIR] [--derived DIR]     materialize every asset for the data found
citeaudit index-warc PATH... [--format cdxj]  index WARC/ARC files (pywb-compatible CDXJ)
citeaudit summary [--derived DIR]             print the summary of the last run
citeaudit catalog [--derived DIR]             rebuild data/derived/catalog.duckdb
citeaudit conformance --out DIR               run the seed 000 source-risk conformance suite
citeaudit ui                                  the Dagster UI on the local instance
citeaudit import {liu,expertqa} PATH --out DIR  import real human-annotated data
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rich.console import Console

from citeaudit import demo_corpus, warc_index

err = Console(stderr=True, soft_wrap=True, highlight=False)


def _cmd_run(args: argparse.Namespace) -> int:
    from citeaudit import layout, summary
    from pipelines import runner

    raw, derived = Path(args.raw).resolve(), Path(args.derived).resolve()
    if not raw.is_dir():
        err.print(
            f"[red]error:[/red] raw folder {raw} does not exist "
            f"(try: citeaudit demo-corpus --out {args.raw})"
        )
        return 2
    dates, strays = layout.discover_dates(raw)
    for stray in strays:
        err.print(f"[yellow]warning:[/yellow] {stray} is not named YYYY-MM-DD; skipped")
    if args.date:
        missing = sorted(set(args.date) - set(dates))
        if missing:
            err.print(
                f"[red]error:[/red] no answers or warc folder for {', '.join(missing)} under {raw}"
            )
            return 2
        dates = sorted(set(args.date))
    if not dates:
        err.print(f"[red]error:[/red] no answers/<date>/ or warc/<date>/ folders under {raw}")
        return 2
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("[bold]run[/bold] {task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} runs"),
        TimeElapsedColumn(),
        console=err,
        disable=args.quiet,
    ) as progress:
        task = progress.add_task(dates[0], total=len(runner.plan(raw, dates)))

        def advance(step: runner.Step, ok: bool) -> None:
            if not ok:
                err.print(
                    f"[red]failed:[/red] {step.job} {step.label} "
                    "(see `make ui` or rerun with --verbose)"
                )
            progress.update(task, advance=1, description=step.label)

        failed = runner.run_dates(raw, derived, dates, on_step=advance, verbose=args.verbose)
    if not args.quiet:
        summary.render(derived)
    return 1 if failed else 0


def _cmd_summary(args: argparse.Namespace) -> int:
    from citeaudit import summary
    from citeaudit.catalog import CATALOG_FILE

    derived = Path(args.derived).resolve()
    if not (derived / CATALOG_FILE).is_file():
        err.print(f"[red]error:[/red] no {derived / CATALOG_FILE}: run `citeaudit run` first")
        return 2
    summary.render(derived)
    return 0


def _cmd_catalog(args: argparse.Namespace) -> int:
    from citeaudit import catalog

    path = catalog.build(Path(args.derived).resolve())
    print(path)
    return 0


def _cmd_ui(args: argparse.Namespace) -> int:
    from pipelines import runner

    home = runner.ensure_dagster_home()
    os.environ.setdefault("CITEAUDIT_RAW", str(Path(args.raw).resolve()))
    os.environ.setdefault("CITEAUDIT_DERIVED", str(Path(args.derived).resolve()))
    err.print(f"Dagster UI on http://{args.host}:{args.port}  (DAGSTER_HOME={home})")
    dagster = Path(sys.executable).with_name("dagster")
    command = [
        str(dagster),
        "dev",
        "-m",
        "pipelines.definitions",
        "-h",
        args.host,
        "-p",
        str(args.port),
    ]
    os.execv(command[0], command)
    return 0  # not reached


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="citeaudit",
        description="Audit the citations in AI search answers: offline, batch, fail-closed.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Run `citeaudit COMMAND --help` for the options of a command.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo_corpus.register_cli(sub)

    run = sub.add_parser(
        "run",
        help="materialize every asset for every date found under --raw",
        description=(
            "Materialize answers ingestion, the capture index and the citation checks for every "
            "observation date found under RAW (answers/<date>/, warc/<date>/), in this process, "
            "recorded in the Dagster instance at DAGSTER_HOME (default ./.dagster_home); then "
            "rebuild DERIVED/catalog.duckdb and print a summary."
        ),
    )
    run.add_argument("--raw", default="data/raw", help="input folder (default: data/raw)")
    run.add_argument(
        "--derived", default="data/derived", help="output folder (default: data/derived)"
    )
    run.add_argument(
        "--date", action="append", metavar="YYYY-MM-DD", help="only this date (repeatable)"
    )
    run.add_argument("--verbose", action="store_true", help="show Dagster's event log")
    run.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
    run.set_defaults(func=_cmd_run)

    warc_index.register_cli(sub)
    from citeaudit.source_risk.conformance import cli as conformance_cli

    conformance_cli.register_cli(sub)

    from citeaudit.imports.cli import register_cli as register_import

    register_import(sub)

    summ = sub.add_parser("summary", help="print the summary of what is in --derived")
    summ.add_argument(
        "--derived", default="data/derived", help="output folder (default: data/derived)"
    )
    summ.set_defaults(func=_cmd_summary)

    cat = sub.add_parser("catalog", help="rebuild DERIVED/catalog.duckdb (a view per asset)")
    cat.add_argument(
        "--derived", default="data/derived", help="output folder (default: data/derived)"
    )
    cat.set_defaults(func=_cmd_catalog)

    ui = sub.add_parser("ui", help="start the Dagster UI (dagster dev) on the local instance")
    ui.add_argument("--raw", default="data/raw")
    ui.add_argument("--derived", default="data/derived")
    ui.add_argument("--host", default="127.0.0.1")
    ui.add_argument("--port", type=int, default=3000)
    ui.set_defaults(func=_cmd_ui)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``citeaudit`` console script."""
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
