"""``citeaudit conformance --out DIR``: run the source-risk specification's conformance suite, print
its tables."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.table import Table


def render(counts: dict, out: Path, console: Console | None = None) -> None:
    """Print Table II, the ablations and Table III from the suite's counts."""
    console = console or Console(width=110)
    head = Table(title="Source-risk conformance: resolver vs oracle (81 states)")
    for col in ("agreement", "positive", "negative", "unresolved"):
        head.add_column(col, justify="right")
    head.add_row(f"{counts['oracle_agreement']}/{counts['states']}", str(counts["positives"]),
                 str(counts["negatives"]), str(counts["unresolved"]))
    console.print(head)
    t2 = Table(title="Table II: contract comparisons (16 complete, 65 incomplete states)")
    for col in ("method", "guard", "mismatches on 16", "resolutions on 65", "unresolved"):
        t2.add_column(col, justify="left" if col in ("method", "guard") else "right")
    for key, row in counts["table2"].items():
        method, guard = key.split("/")
        t2.add_row(method, guard, str(row["mismatches"]), str(row["resolutions"]),
                   str(row["unresolved"]))
    console.print(t2)
    ab = Table(title="Ablations and coverage")
    ab.add_column("check")
    ab.add_column("result", justify="right")
    for name, added in counts["ablation_added_positives"].items():
        ab.add_row(f"{name}: added positives on 16", str(added))
    ab.add_row("drop d_Q: endpoints changed of 81", str(counts["drop_dq_changed"]))
    ab.add_row("short-circuit policy resolves", f"{counts['short_circuit_resolved']}/81")
    ab.add_row("complete-case contract resolves", f"{counts['complete_case_resolved']}/81")
    ab.add_row("D flip removes omission only at", ", ".join(counts["d_flip_removal_states"]))
    ab.add_row("D flip pairs staying negative", str(counts["d_flip_unchanged_negative"]))
    console.print(ab)
    t3 = Table(title="Table III: finite conformance checks (not semantic accuracy)")
    t3.add_column("check")
    t3.add_column("passed", justify="right")
    t3.add_column("total", justify="right")
    for name, (passed, total) in counts["table3"].items():
        t3.add_row(name, str(passed), str(total))
    console.print(t3)
    console.print(f"evidence files and manifest.sha256 in {out}")


def _cmd(args: argparse.Namespace) -> int:
    from citeaudit.source_risk.conformance.suite import run_suite

    out = Path(args.out)
    counts = run_suite(out)
    render(counts, out)
    ok = (counts["oracle_agreement"] == counts["states"]
          and counts["mutations_expected_type"] == counts["mutations"])
    return 0 if ok else 1


def register_cli(sub: argparse._SubParsersAction) -> None:
    """Add the ``conformance`` subcommand to the citeaudit parser."""
    p = sub.add_parser("conformance", help="run the source-risk conformance suite")
    p.add_argument("--out", required=True, help="folder for fixtures, predictions, CSVs")
    p.set_defaults(func=_cmd)
