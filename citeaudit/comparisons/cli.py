"""``citeaudit compare``: what changed on a date, in the terminal; exit 3 when an alert fires.

Reads the ``comparison_units`` a run wrote (nothing is recomputed from the inputs), compares as
the ``comparisons`` asset does, with the date to compare against chosen on the command line,
and applies the codebook's ``alerts:`` rules: for cron and CI, the exit status is 3 when a rule
fires, 0 when none does, 2 when the comparison cannot be made (the message says why and what
to run).
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from citeaudit import codebook, layout, storage
from citeaudit.comparisons import alerts as alerts_mod
from citeaudit.comparisons import compute, domains, units

EXIT_ALERT = 3
EXIT_UNUSABLE = 2


def _days(text: str) -> int:
    match = re.fullmatch(r"(\d+)d?", text.strip())
    if not match or int(match.group(1)) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a number of days, e.g. 7d")
    return int(match.group(1))


def register_cli(subparsers: Any) -> None:
    """Add ``compare --date D [--vs D2 | --baseline 7d] [--engines A,B] [--codebook V]``."""
    p = subparsers.add_parser(
        "compare",
        help="what changed on a date (engines, dates, codebooks) and is it real; exit 3 on an "
             "alert",
        description=(
            "Compare a date's metrics: every engine against every other on the same queries, "
            "the date against an earlier date (--vs, default the previous date written) and "
            "against a trailing baseline window (--baseline, default 7d), and the codebook "
            "against earlier-sorted codebooks. Each row: the two estimates, the difference "
            "with its 95% interval (queries as clusters), the Holm-adjusted p-value and the "
            "paired queries. Alert rules come from the codebook's alerts: section. Exit "
            "status: 0 no alert, 3 an alert fired, 2 nothing to compare."),
    )
    p.add_argument("--date", required=True, help="observation date to compare (YYYY-MM-DD)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--vs", metavar="D2", help="the earlier date to compare against")
    g.add_argument("--baseline", type=_days, metavar="Nd",
                   help="only the trailing window of N days before --date (e.g. 7d)")
    p.add_argument("--engines", help="comma-separated engines to compare (default: all)")
    p.add_argument("--codebook", help="codebook version (default: the last one)")
    p.add_argument("--all", action="store_true",
                   help="print every comparison, not only the significant ones and alerts")
    p.add_argument("--raw", default="data/raw", help="raw folder (default: data/raw)")
    p.add_argument("--derived", default="data/derived",
                   help="derived folder (default: data/derived)")
    p.set_defaults(func=_cmd_compare)

    d = subparsers.add_parser(
        "domains",
        help="the domains cited most on a date, with dead, changed and unsupported rates",
        description=(
            "The cited_domains table of one date × codebook (written by `citeaudit run`): the "
            "domains an engine (default: all engines) cites most, with each engine's "
            "citations, the dead, changed and unsupported rates over the resolved citations "
            "with 95% intervals (queries as clusters; u = unresolved, beside), the sources "
            "retrieved but not cited, and the citations on the 7 days before. Exit 2 when the "
            "date was not run."),
    )
    d.add_argument("--date", required=True, help="observation date (YYYY-MM-DD)")
    d.add_argument("--engine", default="all", help="one engine (default: all engines pooled)")
    d.add_argument("--top", type=int, default=25, metavar="N",
                   help="how many domains to list (default: 25)")
    d.add_argument("--codebook", help="codebook version (default: the last one)")
    d.add_argument("--raw", default="data/raw", help="raw folder (default: data/raw)")
    d.add_argument("--derived", default="data/derived",
                   help="derived folder (default: data/derived)")
    d.set_defaults(func=_cmd_domains)


def _fmt(v: float | None, pct: bool) -> str:
    if v is None:
        return "—"
    return f"{100 * v:+.1f}" if pct else f"{v:+,.0f}"


def _estimate(v: float | None, pct: bool) -> str:
    if v is None:
        return "—"
    return f"{100 * v:.1f}%" if pct else f"{v:,.0f}"


def _print(rows: list[dict[str, Any]], fired: list[dict[str, Any]], title: str,
           show_all: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    from citeaudit.metrics.definitions import BY_NAME

    # wide enough for the table on a narrow terminal (a pipe, a CI log): rows do not fold
    console = Console(soft_wrap=False, highlight=False, width=max(Console().width, 160))
    shown = rows if show_all else [r for r in rows if r["significant"]]
    table = Table(title=title, show_lines=False)
    for col in ("comparison", "metric", "a", "b", "difference [95% CI]", "p (Holm)", "paired",
                "unres. a/b"):
        text = col in ("comparison", "metric")
        table.add_column(col, justify="left" if text else "right", no_wrap=True)
    for r in shown:
        pct = BY_NAME[r["metric"]].kind == "rate"
        if r["family"] == "engine_vs_engine":
            what = f"{r['engine_a']} vs {r['engine_b']}"
        elif r["family"] == "vs_codebook":
            what = f"{r['engine_a']}: {r['codebook_a']} vs {r['codebook_b']}"
        elif r["family"] == "vs_baseline":
            what = f"{r['engine_a']}: vs baseline {r['period_b']}"
        elif r["family"] == "vs_version":
            what = f"{r['engine_a']}: version {r['version_a']} vs {r['version_b']}"
        else:
            what = f"{r['engine_a']}: vs {r['period_b']}"
        unit = " pp" if pct else ""
        if r["verdict"] != "estimated":
            diff = r["reason"]
        elif r["ci_low"] is None:  # below the floor of evidence: the difference, untested
            diff = f"{_fmt(r['difference'], pct)}{unit} ({r['reason']})"
        else:
            diff = (f"{_fmt(r['difference'], pct)}{unit} [{_fmt(r['ci_low'], pct)}, "
                    f"{_fmt(r['ci_high'], pct)}]")
        p = r["p_adjusted"]
        style = "bold" if r["significant"] else None
        table.add_row(what, r["metric"], _estimate(r["estimate_a"], pct),
                      _estimate(r["estimate_b"], pct), diff,
                      "—" if p is None else f"{p:.3g}", str(r["paired_queries"] or 0),
                      f"{r['unresolved_a']}/{r['unresolved_b']}", style=style)
    console.print(table)
    significant = sum(bool(r["significant"]) for r in rows)
    console.print(f"{len(rows)} comparisons, {significant} significant after Holm's adjustment "
                  f"(per family × metric){'' if show_all else '; --all prints every one'}")
    for a in fired:
        console.print(f"[red]ALERT[/red] {a['rule']} ({a['severity']}): {a['detail']}")
    if not fired:
        console.print("no alert")


def _version_or_error(raw, wanted: str | None) -> str | None:
    """``--codebook``, else the raw folder's last codebook version; None (said on stderr) when
    there is none."""
    version = wanted or (layout.codebook_versions(raw) or [None])[-1]
    if version is None:
        print(f"error: {raw}/codebooks holds no codebook: pass --codebook or --raw",
              file=sys.stderr)
    return version


def _cmd_compare(args: argparse.Namespace) -> int:
    err = sys.stderr
    raw, derived = storage.as_root(args.raw), storage.as_root(args.derived)
    version = _version_or_error(raw, args.codebook)
    if version is None:
        return EXIT_UNUSABLE
    try:
        book = codebook.load_version(raw, version)
        alerts_mod.check_rules(book)
    except codebook.CodebookError as exc:
        print(f"error: {exc}", file=err)
        return EXIT_UNUSABLE
    current = units.read(derived, args.date, version)
    if current is None:
        print(f"error: no comparison_units for {args.date} × codebook {version} under "
              f"{derived}: run `citeaudit run --raw {raw} --derived {derived} --date "
              f"{args.date}` first", file=err)
        return EXIT_UNUSABLE
    days = args.baseline or compute.BASELINE_DAYS
    history = compute.history(derived, args.date, version, days)
    if args.vs is not None:
        other = units.read(derived, args.vs, version)
        if other is None:
            print(f"error: --vs {args.vs}: no comparison_units for that date × codebook "
                  f"{version} under {derived}", file=err)
            return EXIT_UNUSABLE
        history = {args.vs: other}
    engines = [e.strip() for e in args.engines.split(",")] if args.engines else None
    others = ({} if args.vs or args.baseline else
              compute.earlier_codebooks(derived, args.date, version,
                                        layout.codebook_versions(raw)))
    table = compute.compare(current, args.date, version, history=history, codebooks=others,
                            baseline_days=days if args.vs is None else 0, engines=engines,
                            vs_date=args.vs)
    if args.baseline:
        keep = [i for i, f in enumerate(table.column("family").to_pylist())
                if f != "vs_previous_date"]
        table = table.take(keep)
    if engines:
        known = set(table.column("engine_a").to_pylist()) | set(
            table.column("engine_b").to_pylist())
        unknown = [e for e in engines if e not in known]
        if unknown:
            print(f"error: --engines: {', '.join(unknown)} not among the engines of "
                  f"{args.date} ({', '.join(sorted(known - {compute.ALL})) or 'none'})",
                  file=err)
            return EXIT_UNUSABLE
    fired = alerts_mod.evaluate(book.alerts, table).to_pylist()
    _print(table.to_pylist(), fired, f"What changed on {args.date} (codebook {version})",
           args.all)
    return EXIT_ALERT if fired else 0


def _cmd_domains(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    err = sys.stderr
    raw, derived = storage.as_root(args.raw), storage.as_root(args.derived)
    version = _version_or_error(raw, args.codebook)
    if version is None:
        return EXIT_UNUSABLE
    table = domains.read(derived, args.date, version)
    if table is None:
        print(f"error: no cited_domains for {args.date} × codebook {version} under {derived}: "
              f"run `citeaudit run --raw {raw} --derived {derived} --date {args.date}` first",
              file=err)
        return EXIT_UNUSABLE
    engines = sorted(set(table.column("engine").to_pylist()))
    if args.engine not in engines:
        print(f"error: --engine: {args.engine} not among the engines of {args.date} "
              f"({', '.join(engines)})", file=err)
        return EXIT_UNUSABLE
    shown = domains.view(table, domains.earlier(derived, args.date, version,
                                                engine=args.engine),
                         top=max(args.top, 1), engine=args.engine)
    console = Console(soft_wrap=False, highlight=False, width=max(Console().width, 190))
    out = Table(title=f"Cited domains on {args.date} (codebook {version}, engine "
                      f"{escape(args.engine)}): {len(shown['rows'])} of {shown['n_domains']}")
    for col in ("domain", "citations", "queries", "dead", "changed", "unsupported",
                "retrieved, not cited", "earlier dates"):
        out.add_column(col, justify="left" if col == "domain" else "right", no_wrap=True)
    for r in shown["rows"]:
        def cell(c: dict[str, str], n: int | None = None, u: int | None = None) -> str:
            tail = "" if n is None else f" n={n} u={u}"
            return f"{c['text']} {c['ci']}{tail}".strip()

        out.add_row(escape(r["cited_domain"]), str(r["citations"]), str(r["queries"]),
                    cell(r["dead_cell"], r["existence_resolved"], r["existence_unresolved"]),
                    cell(r["changed_cell"]),
                    cell(r["unsupported_cell"], r["support_resolved"], r["support_unresolved"]),
                    str(r["retrieved_not_cited"]) if shown["retrieved_known"] else "—",
                    " · ".join(str(n) for n in r["earlier"]) or "—")
    console.print(out)
    console.print("rate [95% interval], n = resolved citations, u = unresolved beside; earlier "
                  f"dates: {', '.join(shown['earlier_dates']) or 'none written'}")
    if shown["never_cited"]:
        console.print("retrieved but never cited: " + ", ".join(
            f"{escape(r['cited_domain'])} ({r['retrieved_not_cited']})"
            for r in shown["never_cited"]))
    elif not shown["retrieved_known"]:
        console.print("retrieved but never cited: unknown (no answer lists the sources its "
                      "engine retrieved; the engine imports keep them)")
    return 0
