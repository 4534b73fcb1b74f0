"""``citeaudit``: the command line of the audit pipeline.

citeaudit demo-corpus --out data/raw          generate a realistic demo corpus
citeaudit run [--raw DIR] [--derived DIR]     materialize every asset for the data found
citeaudit backfill --codebook V [--from D]    recompute one codebook's judged assets
citeaudit status                              per asset and partition: materialized/stale/failed
citeaudit index-warc PATH... [--format cdxj]  index WARC/ARC files (pywb-compatible CDXJ)
citeaudit archive --raw DIR [--date D] [--via URL]  capture the cited pages into WARC
citeaudit summary [--derived DIR] [--date D]  print the summary (every date, or one)
citeaudit catalog [--derived DIR]             rebuild data/derived/catalog.duckdb
citeaudit conformance --out DIR               run the source-risk conformance suite
citeaudit ui                                  the Dagster UI on the local instance
citeaudit import {liu,expertqa} PATH --out DIR  import real human-annotated data
citeaudit import openai|gemini|anthropic|perplexity PATH... --out DIR   engine responses
citeaudit collect --engine E --queries PANEL --out DIR   ask an engine a query panel
citeaudit validate-grader expertqa PATH       the evidence locator against expert labels
citeaudit review export|import                Label Studio tasks out, its JSON export in
citeaudit check [--raw DIR]                   what will not be read, and why; settings validated
citeaudit init [--raw DIR]                    a raw folder's layout and the default codebook
citeaudit report [--derived DIR]              the paths of the HTML reports
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from citeaudit import storage
from citeaudit.safe_text import safe

# Every command whose code lives in its own module, in the order `citeaudit --help` lists
# them: (module, its ``register_cli``, ((command, one-line help), ...)). Only the module of
# the command being run is imported; the others are listed by name and help alone, so that
# `citeaudit index-warc` does not pay for dagster, duckdb or the demo corpus at start.
# tests/test_cli.py checks these help lines against what each module registers.
LAZY_COMMANDS: tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...] = (
    ("citeaudit.demo_corpus", "register_cli", (
        ("demo-corpus",
         "generate a realistic demo corpus (answers, WARCs, annotations, ground truth)"),
        ("demo-archive", "archive the demo's last date live from its own loopback web site"),
        ("demo-label", "the demo's annotators label its drawn review sample (from the "
                       "planted truth, with their usual noise)"),
    )),
    ("citeaudit.ops_cli", "register_cli", (
        ("check", "list every file and folder under --raw that will not be read, and why; "
                  "validate citeaudit.yaml and the codebooks"),
        ("init", "create a raw folder: its layout, a README and the documented default codebook"),
        ("run", "materialize every asset for the dates found under --raw (or some of them)"),
        ("backfill", "recompute every date × codebook asset of one codebook version"),
        ("status", "materialized / stale / failed / missing, per asset and partition"),
    )),
    ("citeaudit.archive.index", "register_cli", (
        ("index-warc", "index WARC/ARC files into a capture table (parquet) or pywb CDXJ"),
    )),
    ("citeaudit.archive.capture", "register_cli", (
        ("archive",
         "capture the pages a day's answers cite into WARC (politely, robots obeyed)"),
    )),
    ("citeaudit.archive.lookup", "register_cli", (
        ("replay", "serve the project's WARCs in a local pywb, so replay links open"),
    )),
    ("citeaudit.source_risk.conformance.cli", "register_cli", (
        ("conformance", "run the source-risk conformance suite"),
    )),
    ("citeaudit.imports.cli", "register_cli", (
        ("import", "import engine API responses (openai, gemini, anthropic, perplexity) or "
                   "real human-annotated data (liu, expertqa) into a raw folder"),
    )),
    ("citeaudit.imports.collect", "register_cli", (
        ("collect", "ask an engine each query of a panel (vendor SDK, web search on) and "
                    "import the answers"),
    )),
    ("citeaudit.comparisons.cli", "register_cli", (
        ("compare", "what changed on a date (engines, dates, codebooks) and is it real; "
                    "exit 3 on an alert"),
        ("domains", "the domains cited most on a date, with dead, changed and unsupported "
                    "rates"),
    )),
    ("citeaudit.support.cli", "register_cli", (
        ("review", "Label Studio round trip: export the review queue as tasks, import a "
                   "Label Studio JSON export"),
        ("sample", "draw the pairs people should label (stratified random, fixed seed) and "
                   "export them to Label Studio with their inclusion probabilities"),
        ("validate-grader", "measure a grader against people's labels (held-out half)"),
    )),
)


@cache
def _err() -> Any:
    """The stderr console (rich is imported on first use, not at start)."""
    from rich.console import Console

    return Console(stderr=True, soft_wrap=True, highlight=False)


def _cmd_summary(args: argparse.Namespace) -> int:
    from citeaudit.catalog import CATALOG_FILE

    derived = storage.as_root(args.derived)
    if not (derived / CATALOG_FILE).is_file():
        _err().print(f"[red]error:[/red] no {safe(derived / CATALOG_FILE)}: "
                     "run `citeaudit run` first")
        return 2
    from citeaudit import ops_cli

    if args.date is not None:
        import datetime as dt

        try:
            dt.date.fromisoformat(args.date)
        except ValueError:
            _err().print(f"[red]error:[/red] --date {args.date}: not a date (YYYY-MM-DD)")
            return 2
    ops_cli.print_summary(storage.as_root(args.raw), derived, date=args.date)
    return 0


def _cmd_catalog(args: argparse.Namespace) -> int:
    from citeaudit import catalog
    from pipelines import runlock

    derived = storage.as_root(args.derived)
    try:
        with runlock.hold(derived, warn=lambda m: _err().print(
                f"[yellow]warning:[/yellow] {safe(m)}")):
            path = catalog.build(derived)
    except runlock.LockHeld as exc:
        _err().print(f"[red]error:[/red] {safe(exc)}")
        return 3
    print(path)
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    derived = storage.as_root(args.derived)
    pages = sorted((derived / "report").glob("observation_date=*/codebook=*/index.html"))
    if not pages:
        _err().print(f"[red]error:[/red] no report under {safe(derived / 'report')}: "
                     "run `citeaudit run`")
        return 2
    for page in pages:
        print(page)
    return 0


def _cmd_ui(args: argparse.Namespace) -> int:
    raw, derived = storage.as_root(args.raw), storage.as_root(args.derived)
    if not raw.is_dir():
        _err().print(f"[red]error:[/red] raw folder {safe(raw)} does not exist (--raw DIR)")
        return 2
    os.environ.setdefault("CITEAUDIT_RAW", str(raw))
    os.environ.setdefault("CITEAUDIT_DERIVED", str(derived))
    from pipelines import runner

    home = runner.ensure_dagster_home(derived)
    runner.sync_partitions(raw, derived)
    _err().print(f"Dagster UI on http://{safe(args.host)}:{safe(args.port)}  "
                 f"(DAGSTER_HOME={safe(home)})")
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
    return supervise(command, UI_STOP_SECONDS)


UI_STOP_SECONDS = 10.0


class _Stop(Exception):
    """A signal asked ``citeaudit ui`` to stop."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def supervise(command: list[str], stop_seconds: float) -> int:
    """Run ``command`` (``dagster dev``) in its own process group until it exits, or until
    SIGINT/SIGTERM: then pass the signal to the whole group and, if any process of it is still
    there after ``stop_seconds``, kill the group. ``ui`` always stops within seconds, even
    when one of dagster's processes hangs on shutdown."""
    import signal
    import subprocess

    def raise_stop(signum: int, _frame: object) -> None:
        raise _Stop(signum)

    previous = {s: signal.signal(s, raise_stop) for s in (signal.SIGINT, signal.SIGTERM)}
    proc = subprocess.Popen(command, start_new_session=True)
    try:
        return proc.wait()
    except _Stop as stop:
        signum = stop.signum
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    try:
        os.killpg(proc.pid, signum)
    except ProcessLookupError:
        return 0
    deadline = time.monotonic() + stop_seconds
    try:
        proc.wait(timeout=stop_seconds)
        # the stragglers a clean exit of dagster dev may leave in its group
        while time.monotonic() < deadline and _group_alive(proc.pid):
            time.sleep(0.2)
    except subprocess.TimeoutExpired:
        pass
    if _group_alive(proc.pid):
        _err().print(f"[yellow]dagster dev did not stop within {stop_seconds:.0f} s: "
                     "killed it[/yellow]")
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return 0


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_ALL = "*"


def build_parser(command: str | None = _ALL) -> argparse.ArgumentParser:
    """The argument parser of ``citeaudit``.

    ``command`` is the subcommand about to run: only its module is imported and registered
    in full; every other module's commands are placeholders with their name and help line,
    enough for ``citeaudit --help`` and for argparse's choice errors. ``None`` registers no
    module in full; the default registers every module (the whole parser, as tests and
    documentation tools want it).
    """
    parser = argparse.ArgumentParser(
        prog="citeaudit",
        description="Audit the citations in AI search answers: offline, batch, fail-closed.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Run `citeaudit COMMAND --help` for the options of a command.",
    )
    from importlib.metadata import PackageNotFoundError, version

    try:
        installed = version("citeaudit")
    except PackageNotFoundError:
        installed = "unknown"
    parser.add_argument("--version", action="version", version=f"citeaudit {installed}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    for module, register, commands in LAZY_COMMANDS:
        if command is _ALL or any(name == command for name, _ in commands):
            getattr(importlib.import_module(module), register)(sub)
        else:
            for name, help_line in commands:
                sub.add_parser(name, help=help_line, add_help=False)

    summ = sub.add_parser("summary", help="print the summary of what is in --derived")
    summ.add_argument("--raw", default="data/raw", help="input folder (default: data/raw)")
    summ.add_argument(
        "--derived", default="data/derived", help="output folder (default: data/derived)"
    )
    summ.add_argument("--date", default=None, metavar="YYYY-MM-DD",
                      help="summarize one observation date (default: every date)")
    summ.set_defaults(func=_cmd_summary)

    cat = sub.add_parser("catalog", help="rebuild DERIVED/catalog.duckdb (a view per asset)")
    cat.add_argument(
        "--derived", default="data/derived", help="output folder (default: data/derived)"
    )
    cat.set_defaults(func=_cmd_catalog)

    rep = sub.add_parser(
        "report", help="print the path of every HTML report (one per date × codebook)"
    )
    rep.add_argument(
        "--derived", default="data/derived", help="output folder (default: data/derived)"
    )
    rep.set_defaults(func=_cmd_report)

    ui = sub.add_parser("ui", help="start the Dagster UI (dagster dev) on the local instance")
    ui.add_argument("--raw", default="data/raw", help="input folder (default: data/raw)")
    ui.add_argument(
        "--derived", default="data/derived", help="output folder (default: data/derived)"
    )
    ui.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback)")
    ui.add_argument("--port", type=int, default=3000, help="port (default: 3000)")
    ui.set_defaults(func=_cmd_ui)
    return parser


def _command_named(argv: Sequence[str]) -> str | None:
    """The subcommand in ``argv``: its first word that is not an option (``None`` if none).

    The top-level parser takes only flag options (``--help``, ``--version``), so the first
    other word is the command argparse will dispatch on.
    """
    return next((word for word in argv if not word.startswith("-")), None)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``citeaudit`` console script.

    A file that cannot be opened is a one-line error naming it, not a traceback
    (``CITEAUDIT_DEBUG=1`` shows the traceback); Ctrl-C exits 130 without one.
    """
    if argv is None:
        argv = sys.argv[1:]
    args = build_parser(_command_named(argv)).parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except OSError as exc:
        if os.environ.get("CITEAUDIT_DEBUG") or exc.filename is None:
            raise
        _err().print(
            f"[red]error:[/red] {safe(exc.filename)}: {safe(exc.strerror or exc)} "
            f"(`citeaudit {safe(args.command)} --help` says what it expects)"
        )
        return 2
    except KeyboardInterrupt:
        _err().print("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
