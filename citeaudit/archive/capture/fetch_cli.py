"""The ``archive`` command: crawl the pages a day's answers cite into WARC, then exit.

``citeaudit archive --raw DIR [--date D | --from D --to D] [--via URL]`` reads the answers under
``DIR/answers/<date>/`` (ingested in memory, as ``citeaudit run`` would), plans against the
WARCs already there, fetches politely with the ``fetch:`` settings of ``DIR/citeaudit.yaml``
and writes ``DIR/warc/<today>/citeaudit-<date>-<seq>.warc.gz`` and ``DIR/fetch_logs/<date>/``.
Running the command is the operator's request to fetch, so ``fetch.enabled`` is not needed
here; ``fetch.contact`` is (it goes into the User-Agent). The web archives listed under
``archives:`` are then asked for what is still missing (citeaudit/archive/lookup/archives.py);
``--no-live`` asks only them.
"""

from __future__ import annotations

import datetime as dt
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from citeaudit import config


def _dates(args: Any, raw: Path) -> list[str] | str:
    from citeaudit.layout import answer_dates

    try:
        if args.date:
            return [dt.date.fromisoformat(args.date).isoformat()]
        found = answer_dates(raw)
        lo = dt.date.fromisoformat(args.from_date).isoformat() if args.from_date else None
        hi = dt.date.fromisoformat(args.to_date).isoformat() if args.to_date else None
    except ValueError as exc:
        return f"dates must be YYYY-MM-DD: {exc}"
    return [d for d in found if (lo is None or d >= lo) and (hi is None or d <= hi)]


def register_cli(subparsers: Any) -> None:
    """Add ``archive --raw DIR [--date D | --from D --to D] [--via URL]``."""
    p = subparsers.add_parser(
        "archive",
        help="capture the pages a day's answers cite into WARC (politely, robots obeyed)",
        description=(
            "Fetch every cited URL of the date(s) that has no readable capture near its "
            "reference time, or whose newest capture is older than fetch.current_after_days, "
            "and write WARC/1.1 under RAW/warc/<today>/ plus a crawl log under "
            "RAW/fetch_logs/<date>/; then ask the web archives listed under archives: for the "
            "pages still without a capture near their reference time. Loopback, private and "
            "link-local addresses (in any spelling, or by what a name resolves to) and ports "
            "outside fetch.allowed_ports are refused unless fetch.allow_private_networks is "
            "true; one random never-existing path per site is fetched as a soft-404 probe "
            "(fetch.soft_404_probe); with fetch.browser: auto, a page whose static capture is a "
            "script shell is rendered in headless Chromium (every sub-request fetched, checked "
            "and archived by the crawler; the rendered DOM kept as its own record). Settings: "
            "the fetch: and archives: sections of "
            "RAW/citeaudit.yaml."),
    )
    p.add_argument("--raw", default="data/raw", help="raw folder (default: data/raw)")
    when = p.add_mutually_exclusive_group()
    when.add_argument("--date", help="one observation date (YYYY-MM-DD)")
    when.add_argument("--from", dest="from_date", help="first observation date (inclusive)")
    p.add_argument("--to", dest="to_date", help="last observation date (inclusive)")
    p.add_argument("--via", help="send every request to this origin, e.g. http://127.0.0.1:8080 "
                   "(the Host header and the WARC target URI stay the cited URL's)")
    p.add_argument("--contact", help="operator contact for the User-Agent (else fetch.contact)")
    p.add_argument("--refresh-robots", action="store_true",
                   help="ask every host for robots.txt again (else an answer kept in RAW/robots/ "
                   "is reused while younger than fetch.robots_max_age_hours, default 24)")
    p.add_argument("--no-live", action="store_true",
                   help="do not fetch live; only ask the web archives listed under archives:")
    p.set_defaults(func=_cli_archive)


def _cli_archive(args: Any) -> int:
    from dataclasses import replace

    from citeaudit.archive.capture.fetch_log import lean_process

    if sys.argv[1:2] == ["archive"]:
        # this process is the archive command itself (not a caller running it in its own
        # process): it only captures, ~50 MB less peak RSS (see the docstring)
        lean_process()
    from citeaudit.archive.capture import crawl
    from citeaudit.archive.capture.windows import window_warnings
    from citeaudit.ingest.answers import answer_files, ingest_files

    err = sys.stderr
    raw = Path(args.raw).resolve()
    if not raw.is_dir():
        print(f"archive: no such folder: {raw}", file=err)
        return 2
    try:
        cfg = config.load(raw)
        settings = cfg.fetch.with_via(args.via)
    except config.ConfigError as exc:
        print(f"archive: {exc}", file=err)
        return 2
    if args.contact:
        settings = replace(settings, contact=args.contact)
    if not settings.contact:
        print(f"archive: set fetch.contact in {raw / config.CONFIG_FILE} or pass --contact "
              "(site operators must be able to reach whoever crawls them)", file=err)
        return 2
    if settings.via and not settings.via.startswith(("http://", "https://")):
        print(f"archive: --via must be an http(s) origin, got {settings.via!r}", file=err)
        return 2
    dates = _dates(args, raw)
    if isinstance(dates, str):
        print(f"archive: {dates}", file=err)
        return 2
    if not dates:
        print(f"archive: no observation dates under {raw / 'answers'} in that range", file=err)
        return 2
    if args.refresh_robots:
        from citeaudit.archive.capture.robots_memory import mark_refresh

        mark_refresh(raw, dt.datetime.now(dt.UTC))
    for line in window_warnings(raw, settings):
        print(line, file=err)
    for date in dates:
        result = ingest_files(answer_files(raw, date), raw)
        out = crawl.archive_date(raw, date, result.citations, result.answers, settings,
                                 progress=_progress(date, err), archives=cfg.archives,
                                 live=not args.no_live)
        counts = Counter(out.log.column("outcome").to_pylist())
        listed = ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "nothing to do"
        print(f"archive {date}: {listed}; {len(out.files)} WARC file(s)", file=err)
        if counts.get("browser_unavailable"):
            # fetch.browser is on but there is no browser: said once, the crawl went on
            why = next(d for o, d in zip(out.log.column("outcome").to_pylist(),
                                         out.log.column("detail").to_pylist(), strict=True)
                       if o == "browser_unavailable")
            print(f"archive {date}: {counts['browser_unavailable']} page(s) not rendered, "
                  f"their static captures stand: {why}", file=err)
        for f in out.files:
            print(f.relative_to(raw).as_posix())
    return 0


def _progress(date: str, stream: Any):
    def report(done: int, total: int) -> None:
        if stream.isatty() or done == total or done % 100 == 0:
            print(f"\rarchive {date}: {done}/{total} pages", end="\n" if done == total else "",
                  file=stream, flush=True)
    return report
