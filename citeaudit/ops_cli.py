"""Operator commands: ``citeaudit run``, ``citeaudit backfill`` and ``citeaudit status``.

citeaudit run [--date D ... | --from D --to D] [--codebook V ...] [--executor celery]
    daily audit per date, judged audit per answer date × codebook, catalog (in this process,
    or with the steps on Celery workers)
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
import os
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from citeaudit.safe_text import safe

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
    """The raw root (a local folder or ``s3://bucket/prefix``), or None after an error."""
    from citeaudit import storage

    try:
        raw = storage.as_root(raw_arg)
        storage.check_root(raw, "raw")
    except storage.StorageError as exc:
        err.print(f"[red]error:[/red] {safe(exc)}")
        return None
    storage.use_remote(raw)
    if not raw.is_dir():
        err.print(
            f"[red]error:[/red] raw folder {safe(raw)} does not exist "
            f"(try: citeaudit demo-corpus --out {safe(raw_arg)})"
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
            err.print(f"[red]error:[/red] no {safe(what)} for {safe(', '.join(missing))} "
                      f"under {safe(raw)}")
            return None
        return sorted(set(args.date))
    lo, hi = args.date_from or "0000-01-01", args.date_to or "9999-12-31"
    if lo > hi:
        err.print(f"[red]error:[/red] --from {safe(lo)} is after --to {safe(hi)}")
        return None
    picked = [d for d in dates if lo <= d <= hi]
    if not picked:
        span = f" between {lo} and {hi}" if (args.date_from or args.date_to) else ""
        err.print(f"[red]error:[/red] no {safe(what)}{safe(span)} under {safe(raw)}")
        return None
    return picked


def one_line(exc: Exception) -> str:
    """An error's message on one line (YAML errors span several): file, key and fix stay."""
    return " ".join(str(exc).split())


def config_problems(raw: Path, versions: list[str] | None = None) -> list[str]:
    """One line per file of settings that cannot be used: ``citeaudit.yaml`` and every codebook
    (or the ``versions`` given), each naming the file, the key and the fix."""
    from citeaudit import codebook, config, layout

    problems = []
    try:
        config.load(raw)
    except config.ConfigError as exc:
        problems.append(one_line(exc))
    for version in layout.codebook_versions(raw) if versions is None else versions:
        try:
            codebook.load_version(raw, version)
        except codebook.CodebookError as exc:
            problems.append(one_line(exc))
    return problems


def _versions_or_error(raw: Path, wanted: list[str] | None) -> list[str] | None:
    """The codebook versions asked for (all on disk by default), each validated."""
    from citeaudit import codebook, layout

    on_disk = layout.codebook_versions(raw)
    versions = sorted(set(wanted)) if wanted else on_disk
    for version in versions:
        if version not in on_disk:
            err.print(
                f"[red]error:[/red] no codebooks/{safe(version)}.yaml under {safe(raw)} "
                f"(versions there: {safe(', '.join(on_disk) or 'none')})"
            )
            return None
        try:
            codebook.load_version(raw, version)
        except codebook.CodebookError as exc:
            err.print(f"[red]error:[/red] {safe(one_line(exc))}", soft_wrap=True,
                      highlight=False)
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
                f"[red]failed:[/red] {safe(step.job)} {safe(step.label)} "
                "(see `citeaudit status`, `make ui`, or rerun with --verbose)"
            )
        progress.update(task, advance=1, description=safe(step.label))

    return advance


SHOW_IGNORED = 20


def report_ignored(raw: Path, quiet: bool = False) -> int:
    """Print what under ``raw`` will not be read (one warning line each, the first
    ``SHOW_IGNORED``); return how many."""
    from citeaudit.ingest import raw_check

    rows = raw_check.ignored_inputs(raw).to_pylist()
    if quiet:
        return len(rows)
    for row in rows[:SHOW_IGNORED]:
        err.print(
            f"[yellow]not read:[/yellow] {safe(raw / row['path'])} "
            f"({safe(row['reason'])}: {safe(row['detail'])})"
        )
    if len(rows) > SHOW_IGNORED:
        err.print(f"… {safe(len(rows) - SHOW_IGNORED)} more: `citeaudit check --raw {safe(raw)}`")
    return len(rows)


def _derived_or_error(derived_arg: str):  # -> Path | UPath | None
    """The derived root (a local folder or ``s3://bucket/prefix``), or None after an error (a
    remote root's bucket must exist and accept the credentials)."""
    from citeaudit import storage

    try:
        derived = storage.as_root(derived_arg)
        storage.check_root(derived, "derived", must_exist=False)
    except storage.StorageError as exc:
        err.print(f"[red]error:[/red] {safe(exc)}")
        return None
    storage.use_remote(derived)
    return derived


def _lock_or_error(derived: Path):
    """The derived folder's run lock, or None after a message naming its holder."""
    from pipelines import runlock

    lock = runlock.hold(derived, warn=lambda m: err.print(f"[yellow]warning:[/yellow] {safe(m)}"))
    try:
        lock.__enter__()
    except runlock.LockHeld as exc:
        err.print(f"[red]error:[/red] {safe(exc)}")
        return None
    return lock


def _executor_or_error(wanted: str | None) -> str | None:
    """--executor, else $CITEAUDIT_EXECUTOR, else auto; None after an error."""
    from pipelines.distributed import DistributedError, executor_name

    if wanted:
        return wanted
    try:
        return executor_name()
    except DistributedError as exc:
        err.print(f"[red]error:[/red] {safe(exc)}")
        return None


def _distributed_error(exc: Exception) -> int:
    """Exit status 4 after the message of a missing distributed service; re-raise others."""
    from pipelines.distributed import DistributedError

    if not isinstance(exc, DistributedError):
        raise exc
    err.print(f"[red]error:[/red] {safe(exc)}")
    return 4


def _executor_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--executor",
        choices=("auto", "in_process", "multiprocess", "celery"),
        default=None,
        help="where the daily and judged steps execute: auto (default; or $CITEAUDIT_EXECUTOR): "
        "in this process, but a large date's judged run whose registry lookups are still to be "
        "made runs two steps at a time so the registry wait overlaps the CPU steps "
        "($CITEAUDIT_OVERLAP_MIN_CITATIONS, default 5000 citations); in_process: every step "
        "here; multiprocess: every daily and judged run two steps at a time, the registry step "
        "first; celery: on the Celery workers, with the Postgres instance of "
        "DAGSTER_HOME/dagster.yaml (deploy/dagster.postgres.yaml, docs/operations.md); "
        "exit status 4 when the broker, a worker or Postgres is unreachable",
    )


def _mark_registry_refresh(derived: Path) -> None:
    """``--refresh-registries``: every registry answer fetched before now is asked again (kept
    in DERIVED, so later reruns read the new answers; see citeaudit.scholarly.cache)."""
    from datetime import UTC, datetime

    from citeaudit.scholarly import cache

    cache.mark_refresh(derived, datetime.now(UTC))


def cmd_run(args: argparse.Namespace) -> int:
    """``citeaudit run``: the daily audit per date, the judged audit per date × codebook."""
    from citeaudit import layout

    raw = _raw_or_error(args.raw)
    if raw is None:
        return 2
    derived = _derived_or_error(args.derived)
    if derived is None:
        return 2
    report_ignored(raw, args.quiet)
    found, _strays = layout.discover_dates(raw)
    if not found:
        err.print(
            f"[red]error:[/red] no answers/<YYYY-MM-DD>/ or warc/<YYYY-MM-DD>/ folders under "
            f"{safe(raw)} (the layout is in docs/inputs.md; "
            f"`citeaudit check --raw {safe(args.raw)}` lists "
            "what is there and why it is not read)"
        )
        return 2
    if not layout.codebook_versions(raw):
        err.print(
            f"[red]error:[/red] no codebook: {safe(raw / 'codebooks')} holds no "
            "<version>.yaml, and "
            "every judged stage (L1, L2, support, L3, source risk, metrics, report) needs one. "
            f"Write the documented default with `citeaudit init --raw {safe(args.raw)}` "
            "(schema: docs/codebook.md)"
        )
        return 2
    dates = _select_dates(found, args, raw, "answers or warc folder")
    versions = _versions_or_error(raw, args.codebook)
    if dates is None or versions is None:
        return 2
    bad_config = config_problems(raw, versions=[])
    if bad_config:  # before any work: a typo found at the archive step would be a traceback
        for problem in bad_config:
            err.print(f"[red]error:[/red] {problem}", soft_wrap=True, highlight=False)
        return 2
    executor = _executor_or_error(args.executor)
    if executor is None:
        return 2
    from pipelines import runner

    lock = _lock_or_error(derived)
    if lock is None:
        return 3
    try:
        if getattr(args, "refresh_registries", False):
            _mark_registry_refresh(derived)
        removed, _kept = runner.prune_orphans(raw, derived, orphan_dates(raw, derived))
        if removed:
            err.print(
                f"removed the outputs of {len(removed)} date(s) {safe(raw)} no longer holds "
                f"({safe(', '.join(removed))}: a re-import moved their answers, or their "
                "folder was deleted), so nothing counts them any more",
                soft_wrap=True, highlight=False)
        steps = runner.plan(raw, dates, versions)
        with _progress("run", args.quiet) as progress:
            task = progress.add_task(safe(dates[0]), total=len(steps))
            failed = runner.run_dates(
                raw,
                derived,
                dates,
                versions=versions,
                on_step=_advance(progress, task),
                verbose=args.verbose,
                executor=executor,
            )
    except Exception as exc:
        return _distributed_error(exc)
    finally:
        lock.__exit__(None, None, None)
    if not args.quiet:
        print_summary(raw, derived)
    return 1 if failed else 0


def print_summary(raw: Path, derived: Path, date: str | None = None) -> None:
    """The run summary (every date, or ``date``), then what was not read and what was left
    unchecked, with the command that says more."""
    from citeaudit.report import summary

    summary.render(derived, date=date)
    from citeaudit import parquet_io

    ignored = parquet_io.read_optional(derived, "ignored_inputs")
    if ignored is not None:
        count = ignored.num_rows
        if count:
            err.print(
                f"[yellow]{safe(count)} file(s) or folder(s) under {safe(raw)} were not "
                "read[/yellow]: "
                f"`citeaudit check --raw {safe(raw)}` lists them with the reason"
            )
    orphans = orphan_dates(raw, derived)
    if orphans:
        err.print(
            f"[yellow]{len(orphans)} date(s) in {safe(derived)} have no answers/ or warc/ "
            f"folder under {safe(raw)} any more[/yellow] ({safe(', '.join(orphans))}; e.g. a "
            "re-import moved their answers to another date): their outputs are still counted "
            "by the catalog and `citeaudit status` calls them stale. The next `citeaudit run` "
            "removes those this raw folder built; for the others remove "
            "DERIVED/<asset>/observation_date=<date>/",
            soft_wrap=True, highlight=False)
    unchecked = offline_unchecked(derived)
    if unchecked:
        err.print(
            f"[yellow]{safe(unchecked)} DOI lookup(s) left unchecked[/yellow] (registries offline, "
            "not in the cache): set CITEAUDIT_CROSSREF_URL and CITEAUDIT_OPENALEX_URL to "
            "`official` (or a mirror's URL) to query them"
        )
    from citeaudit import storage

    if storage.is_remote(derived):
        err.print(
            "explore (docs/storage.md): python -c \"from citeaudit import catalog, storage; "
            f"print(catalog.connect(storage.as_root('{safe(derived)}'))"
            ".sql('SELECT * FROM answer_checks LIMIT 5'))\""
        )
        return
    err.print(
        f"explore: `{safe(ui_command(raw, derived))}`, or python -c "
        f"\"import duckdb; print(duckdb.connect('{safe(derived / 'catalog.duckdb')}', "
        "read_only=True).sql('SELECT * FROM answer_checks LIMIT 5'))\""
    )


def ui_command(raw: Path, derived: Path) -> str:
    """The ``citeaudit ui`` command that opens the instance this process used: DAGSTER_HOME
    is named when it is not the default for ``derived`` (``make`` sets ./.dagster_home), so
    the hint never opens an empty instance."""
    from pipelines import runner

    command = f"citeaudit ui --raw {raw} --derived {derived}"
    home = os.environ.get("DAGSTER_HOME")
    if home and Path(home).resolve() != runner.default_dagster_home(derived):
        command = f"DAGSTER_HOME={Path(home).resolve()} {command}"
    return command


def orphan_dates(raw: Path, derived: Path) -> list[str]:
    """Observation dates with outputs but no dated folder under ``raw``: outputs no run will
    replace (a re-import that moved a response to another date leaves them)."""
    from citeaudit import layout, storage

    if storage.is_remote(derived) or storage.is_remote(raw) or not raw.is_dir():
        return []
    found = set(layout.discover_dates(raw)[0])
    derived_dates = {p.name.split("=", 1)[1] for key in ("observation_date", "crawl_date")
                     for p in derived.glob(f"*/{key}=*") if p.is_dir()}
    return sorted(derived_dates - found)


def offline_unchecked(derived: Path) -> int:
    """Distinct DOIs that no registry was asked about because the run was offline."""
    from citeaudit import duck

    files = sorted((derived / "metadata_checks").glob("*/*/data.parquet"))
    if not files:
        return 0
    con = duck.connect()
    rel = con.read_parquet([str(f) for f in files], union_by_name=True)
    if "explanation" not in rel.columns or "doi" not in rel.columns:
        return 0
    offline = rel.filter("verdict = 'unresolved' AND explanation LIKE '%offline_no_cached%'")
    return int(offline.aggregate("count(DISTINCT doi)").fetchall()[0][0])


def cmd_check(args: argparse.Namespace) -> int:
    """``citeaudit check``: every file and folder under --raw that will not be read, and why;
    then ``citeaudit.yaml`` and every codebook validated (one line per problem)."""
    from citeaudit import layout

    raw = _raw_or_error(args.raw)
    if raw is None:
        return 2
    count = report_ignored(raw, quiet=args.json)
    if args.json:
        from citeaudit.ingest import raw_check

        print(json.dumps(raw_check.ignored_inputs(raw).to_pylist(), indent=1))
    problems = []
    if not layout.codebook_versions(raw):
        problems.append(f"no codebooks/<version>.yaml: `citeaudit init --raw {args.raw}`")
    if not layout.answer_dates(raw):
        problems.append("no answers/<YYYY-MM-DD>/*.jsonl: nothing to audit")
    problems += config_problems(raw)
    for problem in problems:
        err.print(f"[red]problem:[/red] {safe(problem)}", soft_wrap=True, highlight=False)
    if not args.json and not count and not problems:
        err.print(f"[green]every file under {safe(raw)} will be read[/green]")
    return 1 if count or problems else 0


RAW_README = """# citeaudit raw folder

Everything citeaudit reads lives here; `citeaudit check --raw .` lists anything it will not read.

    answers/<YYYY-MM-DD>/*.jsonl          one answer per line, by observation date
    warc/<YYYY-MM-DD>/**/*.warc.gz        captures of the cited pages, by crawl date
                                          (also .warc, .arc, .arc.gz)
    annotations/support/*.csv|*.parquet   support judgments, one per row
    annotations/source_risk/*.jsonl       source-risk tuple judgments, any file name
                                          (each record is dated by its answer)
    annotations/annotators.csv            optional: annotator registry
    codebooks/<version>.yaml              label maps, roles, weights, policy (docs/codebook.md)

The formats of answers and annotations are in the project's docs/inputs.md.
"""
INIT_FOLDERS = ("answers", "warc", "annotations/support", "annotations/source_risk",
                "codebooks")
CODEBOOK_HEADER = """\
# The default citeaudit codebook. Every key is documented in docs/codebook.md.
# A codebook is versioned by its file name: copy this file to codebooks/v2.yaml to change a
# rule, and `citeaudit backfill --codebook v2` recomputes only v2's outputs.
#   label_maps       annotators' raw labels -> the support rubric's five categories
#                    (the five names themselves are accepted as raw labels too)
#   source_roles     the source-role taxonomy and which roles need disclosure
#   priority_weights review-priority dimensions (sum to 1)
#   policy           thresholds for PASS / CONTEXTUALIZE / REVIEW / ABSTAIN
#   alignment        the capture window around each citation's reference time
"""


def default_codebook(version: str) -> dict:
    """The codebook ``init`` writes: the demo's label map, which also accepts the support
    rubric's five names themselves (``fully_supported``, ...), the names docs/inputs.md lists,
    so labels written by hand in those words are read, not rejected."""
    from citeaudit import codebook
    from citeaudit.demo_corpus import codebooks

    doc = {**codebooks.codebook("v1"), "version": version}
    doc["label_maps"] = {
        schema: {**mapping, **{label: label for label in codebook.SUPPORT_LABELS}}
        for schema, mapping in doc["label_maps"].items()
    }
    return doc


def cmd_init(args: argparse.Namespace) -> int:
    """``citeaudit init``: the raw folder layout, a README in it and the default codebook."""
    import yaml

    from citeaudit import codebook

    raw = Path(args.raw).resolve()
    if raw.exists() and not raw.is_dir():
        err.print(f"[red]error:[/red] {safe(raw)} exists and is not a folder")
        return 2
    for folder in INIT_FOLDERS:
        (raw / folder).mkdir(parents=True, exist_ok=True)
    written = []
    readme = raw / "README.md"
    if not readme.exists():
        readme.write_text(RAW_README, encoding="utf-8")
        written.append(readme)
    target = raw / "codebooks" / f"{args.version}.yaml"
    if target.exists():
        err.print(f"{safe(target)} exists; left as it is")
    else:
        doc = default_codebook(args.version)
        text = CODEBOOK_HEADER + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
        try:
            codebook.validate(yaml.safe_load(text), str(target), version=args.version)
        except codebook.CodebookError as exc:  # the shipped default must validate
            err.print(f"[red]error:[/red] the default codebook does not validate: {safe(exc)}")
            return 1
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, target)
        written.append(target)
    for path in written:
        print(path)
    err.print(
        f"raw folder ready: put answers in {safe(raw / 'answers')}/<YYYY-MM-DD>/, then "
        f"`citeaudit check --raw {safe(args.raw)}` and `citeaudit run --raw {safe(args.raw)}`"
    )
    return 0


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

    raw = _raw_or_error(args.raw)
    if raw is None:
        return 2
    derived = _derived_or_error(args.derived)
    if derived is None:
        return 2
    versions = _versions_or_error(raw, [args.codebook])
    if versions is None:
        return 2
    found = layout.answer_dates(raw)
    if not found:
        err.print(f"[red]error:[/red] no answers/<date>/ folders under {safe(raw)}")
        return 2
    args.date = None
    dates = _select_dates(found, args, raw, "answer dates")
    if dates is None:
        return 2
    missing = _missing_daily(derived, dates)
    if missing:
        shown = ", ".join(missing[:5]) + (" …" if len(missing) > 5 else "")
        err.print(
            f"[red]error:[/red] the daily audit of {safe(len(missing))} date(s) is not on disk "
            f"({safe(shown)}): run `citeaudit run --from {safe(missing[0])} "
            f"--to {safe(missing[-1])}` first"
        )
        return 2
    executor = _executor_or_error(args.executor)
    if executor is None:
        return 2
    from pipelines import runner

    lock = _lock_or_error(derived)
    if lock is None:
        return 3
    try:
        steps = runner.backfill_plan(raw, args.codebook, dates)
        with _progress(f"backfill {args.codebook}", args.quiet) as progress:
            task = progress.add_task(safe(dates[0]), total=len(steps))
            failed = runner.backfill(
                raw,
                derived,
                args.codebook,
                dates,
                on_step=_advance(progress, task),
                verbose=args.verbose,
                executor=executor,
            )
    except Exception as exc:
        return _distributed_error(exc)
    finally:
        lock.__exit__(None, None, None)
    if not args.quiet:
        err.print(
            f"backfill {safe(args.codebook)}: {len(steps) - len(failed)}/{len(steps)} "
            "partitions "
            f"({safe(dates[0])} … {safe(dates[-1])}) materialized"
        )
    return 1 if failed else 0


def cmd_status(args: argparse.Namespace) -> int:
    """``citeaudit status``: the state of every asset partition, from the Dagster instance."""
    import dagster as dg

    raw = _raw_or_error(args.raw)
    if raw is None:
        return 2
    derived = _derived_or_error(args.derived)
    if derived is None:
        return 2
    from pipelines import runner, status
    from pipelines.definitions import build_defs
    from pipelines.resources import PathsResource

    home = runner.ensure_dagster_home(derived)
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
        summary.add_row(safe(asset), *(str(counter[s] or "") for s in status.STATES))
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
            detail.add_row(safe(row.asset), safe(row.partition),
                           f"[{style}]{safe(row.state)}[/{style}]", safe(row.detail))
        out.print(detail)
        if len(shown) > limit:
            out.print(f"… {len(shown) - limit} more rows: `citeaudit status --all` or "
                      "`--json`")
    elif rows:
        out.print("[green]every partition is materialized and up to date[/green]")
    if leftovers:
        out.print(
            f"[yellow]{safe(len(leftovers))} temporary file(s) of interrupted writes[/yellow] "
            f"(invisible to readers; the next write of their partition replaces them), "
            f"e.g. {safe(leftovers[0])}"
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
    """Add the ``run``, ``backfill``, ``status``, ``check`` and ``init`` subcommands."""
    check = sub.add_parser(
        "check",
        help="list every file and folder under --raw that will not be read, and why; "
             "validate citeaudit.yaml and the codebooks",
        description=(
            "Walk RAW and list every file or folder the pipeline will not read (wrong place, "
            "name or suffix, not a WARC/ARC by its first bytes, unreadable), the same rows as "
            "the ignored_inputs table; also say when no codebook or no answers are there, and "
            "validate RAW/citeaudit.yaml and every codebooks/<version>.yaml (one line each: "
            "file, key and the fix). `citeaudit run` does this first and stops on a bad "
            "settings file. Exit status 1 when anything is listed."
        ),
    )
    check.add_argument("--raw", default="data/raw", help="input folder (default: data/raw)")
    check.add_argument("--json", action="store_true", help="the rows as JSON on stdout")
    check.set_defaults(func=cmd_check)

    init = sub.add_parser(
        "init",
        help="create a raw folder: its layout, a README and the documented default codebook",
        description=(
            "Create RAW/answers, warc, annotations/support, annotations/source_risk and "
            "codebooks, a README.md describing them, and codebooks/VERSION.yaml (the documented "
            "default codebook, schema in docs/codebook.md). Existing files are left as they are."
        ),
    )
    init.add_argument("--raw", default="data/raw", help="folder to create (default: data/raw)")
    init.add_argument("--version", default="v1", help="codebook version to write (default: v1)")
    init.set_defaults(func=cmd_init)

    run = sub.add_parser(
        "run",
        help="materialize every asset for the dates found under --raw (or some of them)",
        description=(
            "Materialize answers ingestion, the capture index and the citation checks for every "
            "observation date found under RAW (answers/<date>/, warc/<date>/), then every "
            "date × codebook asset for each answer date under each codebook, in this process "
            "(or on Celery workers: --executor celery), recorded in the Dagster instance at "
            "DAGSTER_HOME when it is set (`make` sets ./.dagster_home), else "
            "DERIVED/.dagster_home (the rule `citeaudit ui` and `status` follow, and the "
            "printed `citeaudit ui` hint names it); then rebuild DERIVED/catalog.duckdb and "
            "print a summary. Exit status: 0 done, 1 a run failed, 2 usage error, 3 DERIVED "
            "held by another citeaudit process, 4 a service --executor celery needs is "
            "unreachable (broker, worker, Postgres)."
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
    run.add_argument(
        "--refresh-registries",
        action="store_true",
        help="ask Crossref and OpenAlex again for every DOI and search, however recent the "
             "cached answer (by default an answer is reused for the codebook's "
             "scholarly.refresh_days, counted to the end of the observed day); answers fetched "
             "before this run are not reused by later runs either, except when a registry "
             "cannot answer",
    )
    _executor_arg(run)
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
    _executor_arg(backfill)
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
