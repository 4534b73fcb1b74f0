"""Operator commands: ``citeaudit run``, ``citeaudit backfill`` and ``citeaudit status``.

citeaudit run [--date D ... | --from D --to D] [--codebook V ...]
    daily audit per date, judged audit per answer date × codebook, catalog (in this process)
citeaudit backfill --codebook V [--from D --to D]
    recompute every date × codebook asset of one codebook; no other codebook's file is touched
citeaudit status [--all] [--json]
    per asset and partition: materialized, stale, failed, running or missing (from the instance)

The pipeline packages are imported inside the commands, so ``citeaudit --help`` stays fast.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

err = Console(stderr=True, soft_wrap=True, highlight=False)
STATE_STYLE = {
    "materialized": "green",
    "stale": "yellow",
    "failed": "red",
    "running": "cyan",
    "missing": "magenta",
}
DETAIL_ROWS = 40


def _iso_date(text: str) -> str:
    try:
        return dt.date.fromisoformat(text).isoformat()
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a YYYY-MM-DD date: {text!r}") from exc


def _raw_or_error(raw_arg: str) -> Path | None:
    raw = Path(raw_arg).resolve()
    if not raw.is_dir():
        err.print(
            f"[red]error:[/red] raw folder {raw} does not exist "
            f"(try: citeaudit demo-corpus --out {raw_arg})"
        )
        return None
    return raw


def _select_dates(
    dates: list[str], args: argparse.Namespace, raw: Path, what: str
) -> list[str] | None:
    """Dates of ``dates`` picked by --date or --from/--to; None (after an error) when none."""
    if getattr(args, "date", None):
        if args.date_from or args.date_to:
            err.print("[red]error:[/red] give --date or --from/--to, not both")
            return None
        missing = sorted(set(args.date) - set(dates))
        if missing:
            err.print(f"[red]error:[/red] no {what} for {', '.join(missing)} under {raw}")
            return None
        return sorted(set(args.date))
    lo, hi = args.date_from or "0000-01-01", args.date_to or "9999-12-31"
    if lo > hi:
        err.print(f"[red]error:[/red] --from {lo} is after --to {hi}")
        return None
    picked = [d for d in dates if lo <= d <= hi]
    if not picked:
        span = f" between {lo} and {hi}" if (args.date_from or args.date_to) else ""
        err.print(f"[red]error:[/red] no {what}{span} under {raw}")
        return None
    return picked


def _versions_or_error(raw: Path, wanted: list[str] | None) -> list[str] | None:
    """The codebook versions asked for (all on disk by default), each validated."""
    from citeaudit import codebook, layout

    on_disk = layout.codebook_versions(raw)
    versions = sorted(set(wanted)) if wanted else on_disk
    for version in versions:
        if version not in on_disk:
            err.print(
                f"[red]error:[/red] no codebooks/{version}.yaml under {raw} "
                f"(versions there: {', '.join(on_disk) or 'none'})"
            )
            return None
        try:
            codebook.load_version(raw, version)
        except codebook.CodebookError as exc:
            err.print(f"[red]error:[/red] {exc}")
            return None
    return versions


def _progress(verb: str, quiet: bool) -> Progress:
    return Progress(
        TextColumn(f"[bold]{verb}[/bold] {{task.description}}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} runs"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
        disable=quiet,
    )


def _advance(progress: Progress, task: object):  # -> Callable[[Step, bool], None]
    def advance(step, ok: bool) -> None:  # step: pipelines.runner.Step
        if not ok:
            err.print(
                f"[red]failed:[/red] {step.job} {step.label} "
                "(see `citeaudit status`, `make ui`, or rerun with --verbose)"
            )
        progress.update(task, advance=1, description=step.label)

    return advance


def cmd_run(args: argparse.Namespace) -> int:
    """``citeaudit run``: the daily audit per date, the judged audit per date × codebook."""
    from citeaudit import layout
    from citeaudit.report import summary
    from pipelines import runner

    raw = _raw_or_error(args.raw)
    if raw is None:
        return 2
    derived = Path(args.derived).resolve()
    found, strays = layout.discover_dates(raw)
    for stray in strays:
        err.print(f"[yellow]warning:[/yellow] {stray} is not named YYYY-MM-DD; skipped")
    if not found:
        err.print(f"[red]error:[/red] no answers/<date>/ or warc/<date>/ folders under {raw}")
        return 2
    dates = _select_dates(found, args, raw, "answers or warc folder")
    versions = _versions_or_error(raw, args.codebook)
    if dates is None or versions is None:
        return 2
    steps = runner.plan(raw, dates, versions)
    with _progress("run", args.quiet) as progress:
        task = progress.add_task(dates[0], total=len(steps))
        failed = runner.run_dates(
            raw,
            derived,
            dates,
            versions=versions,
            on_step=_advance(progress, task),
            verbose=args.verbose,
        )
    if not args.quiet:
        summary.render(derived)
    return 1 if failed else 0


def _missing_daily(derived: Path, dates: list[str]) -> list[str]:
    """Answer dates whose daily ``citations`` partition is not on disk (judged stages read it)."""
    from citeaudit import parquet_io

    return [
        d
        for d in dates
        if not (
            parquet_io.partition_dir(derived, "citations", {"observation_date": d})
            / parquet_io.DATA_FILE
        ).is_file()
    ]


def cmd_backfill(args: argparse.Namespace) -> int:
    """``citeaudit backfill``: every judged asset of one codebook over a range of answer dates."""
    from citeaudit import layout
    from pipelines import runner

    raw = _raw_or_error(args.raw)
    if raw is None:
        return 2
    derived = Path(args.derived).resolve()
    versions = _versions_or_error(raw, [args.codebook])
    if versions is None:
        return 2
    found = layout.answer_dates(raw)
    if not found:
        err.print(f"[red]error:[/red] no answers/<date>/ folders under {raw}")
        return 2
    args.date = None
    dates = _select_dates(found, args, raw, "answer dates")
    if dates is None:
        return 2
    missing = _missing_daily(derived, dates)
    if missing:
        shown = ", ".join(missing[:5]) + (" …" if len(missing) > 5 else "")
        err.print(
            f"[red]error:[/red] the daily audit of {len(missing)} date(s) is not on disk "
            f"({shown}): run `citeaudit run --from {missing[0]} --to {missing[-1]}` first"
        )
        return 2
    steps = runner.backfill_plan(raw, args.codebook, dates)
    with _progress(f"backfill {args.codebook}", args.quiet) as progress:
        task = progress.add_task(dates[0], total=len(steps))
        failed = runner.backfill(
            raw,
            derived,
            args.codebook,
            dates,
            on_step=_advance(progress, task),
            verbose=args.verbose,
        )
    if not args.quiet:
        err.print(
            f"backfill {args.codebook}: {len(steps) - len(failed)}/{len(steps)} partitions "
            f"({dates[0]} … {dates[-1]}) materialized"
        )
    return 1 if failed else 0


def cmd_status(args: argparse.Namespace) -> int:
    """``citeaudit status``: the state of every asset partition, from the Dagster instance."""
    import dagster as dg

    from pipelines import runner, status
    from pipelines.definitions import build_defs
    from pipelines.resources import PathsResource

    raw = _raw_or_error(args.raw)
    if raw is None:
        return 2
    derived = Path(args.derived).resolve()
    home = runner.ensure_dagster_home()
    defs = build_defs(PathsResource(raw_dir=str(raw), derived_dir=str(derived)))
    with dg.DagsterInstance.get() as instance:
        rows = status.collect(instance, defs, raw, derived)
    leftovers = status.leftover_temp_files(derived)
    if args.json:
        print(
            json.dumps(
                {
                    "dagster_home": str(home),
                    "partitions": [r.as_dict() for r in rows],
                    "temporary_files": [str(p) for p in leftovers],
                },
                indent=1,
            )
        )
        return 1 if any(r.state == "failed" for r in rows) else 0
    out = Console(soft_wrap=False, highlight=False)
    counts: dict[str, Counter] = {}
    for row in rows:
        counts.setdefault(row.asset, Counter())[row.state] += 1
    summary = Table(title=f"citeaudit status  (DAGSTER_HOME={home})", title_justify="left")
    summary.add_column("asset")
    for state in status.STATES:
        summary.add_column(state, justify="right", style=STATE_STYLE[state])
    for asset, counter in counts.items():
        summary.add_row(asset, *(str(counter[s] or "") for s in status.STATES))
    out.print(summary)
    shown = rows if args.all else [r for r in rows if r.state != "materialized"]
    if shown:
        detail = Table(title="partitions" if args.all else "partitions that need attention")
        detail.add_column("asset")
        detail.add_column("partition")
        detail.add_column("state")
        detail.add_column("detail", overflow="fold")
        limit = len(shown) if args.all else DETAIL_ROWS
        for row in shown[:limit]:
            style = STATE_STYLE[row.state]
            detail.add_row(row.asset, row.partition, f"[{style}]{row.state}[/{style}]", row.detail)
        out.print(detail)
        if len(shown) > limit:
            out.print(f"… {len(shown) - limit} more rows: `citeaudit status --all` or `--json`")
    elif rows:
        out.print("[green]every partition is materialized and up to date[/green]")
    if leftovers:
        out.print(
            f"[yellow]{len(leftovers)} temporary file(s) of interrupted writes[/yellow] "
            f"(invisible to readers; the next write of their partition replaces them), "
            f"e.g. {leftovers[0]}"
        )
    return 1 if any(r.state == "failed" for r in rows) else 0


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--raw", default="data/raw", help="input folder (default: data/raw)")
    parser.add_argument(
        "--derived", default="data/derived", help="output folder (default: data/derived)"
    )


def _range(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--from", dest="date_from", type=_iso_date, metavar="YYYY-MM-DD", help="first date"
    )
    parser.add_argument(
        "--to", dest="date_to", type=_iso_date, metavar="YYYY-MM-DD", help="last date"
    )


def register_cli(sub: argparse._SubParsersAction) -> None:
    """Add the ``run``, ``backfill`` and ``status`` subcommands."""
    run = sub.add_parser(
        "run",
        help="materialize every asset for the dates found under --raw (or some of them)",
        description=(
            "Materialize answers ingestion, the capture index and the citation checks for every "
            "observation date found under RAW (answers/<date>/, warc/<date>/), then every "
            "date × codebook asset for each answer date under each codebook, in this process, "
            "recorded in the Dagster instance at DAGSTER_HOME (default ./.dagster_home); then "
            "rebuild DERIVED/catalog.duckdb and print a summary."
        ),
    )
    _common(run)
    run.add_argument(
        "--date",
        action="append",
        type=_iso_date,
        metavar="YYYY-MM-DD",
        help="only this date (repeatable)",
    )
    _range(run)
    run.add_argument(
        "--codebook",
        action="append",
        metavar="VERSION",
        help="only this codebook version (repeatable; default: every codebooks/*.yaml)",
    )
    run.add_argument("--verbose", action="store_true", help="show Dagster's event log")
    run.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
    run.set_defaults(func=cmd_run)

    backfill = sub.add_parser(
        "backfill",
        help="recompute every date × codebook asset of one codebook version",
        description=(
            "Recompute every date × codebook asset of codebook VERSION for each answer date "
            "(between --from and --to), in this process, one judged_audit run per date "
            "recorded in the Dagster instance. Only files under codebook=VERSION/ are written. "
            "The daily audit of those dates must be on disk (citeaudit run)."
        ),
    )
    _common(backfill)
    backfill.add_argument("--codebook", required=True, metavar="VERSION")
    _range(backfill)
    backfill.add_argument("--verbose", action="store_true", help="show Dagster's event log")
    backfill.add_argument("--quiet", action="store_true", help="no progress bar")
    backfill.set_defaults(func=cmd_backfill)

    stat = sub.add_parser(
        "status",
        help="materialized / stale / failed / missing, per asset and partition",
        description=(
            "Read the Dagster instance at DAGSTER_HOME and print, per asset, how many partitions "
            "are materialized, stale (an input changed after), failed, running or missing, and "
            "the partitions that need attention. Exit status 1 when a partition failed."
        ),
    )
    _common(stat)
    stat.add_argument("--all", action="store_true", help="list every partition, not only problems")
    stat.add_argument("--json", action="store_true", help="machine-readable output")
    stat.set_defaults(func=cmd_status)
