"""Replay links: open any aligned capture as it was cited, in a local pywb.

With ``replay.base_url`` set in ``citeaudit.yaml``, every aligned capture gets
``<base_url>/<collection>/<YYYYMMDDhhmmss>/<url>`` (:func:`add_replay_column`, vectorized);
``citeaudit replay`` builds that collection from the raw folder's WARCs and serves it on
loopback so the links open. The collection lives under ``<derived>/replay/`` and holds
*symlinks* to the raw WARCs (nothing is copied), indexed by ``wb-manager reindex``; a rerun
links only what is new and reindexes.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pyarrow as pa

REPLAY_DIR = "replay"
REPLAY_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz")


def add_replay_column(table: pa.Table, prefix: str | None, time_column: str,
                      uri_column: str, name: str = "replay_url") -> pa.Table:
    """``table`` with ``name``: ``<prefix>/<YYYYMMDDhhmmss of time_column>/<uri_column>``, NULL
    where either is NULL or when replay is not configured (``prefix`` None)."""
    if prefix is None or table.num_rows == 0:
        return table.append_column(name, pa.nulls(table.num_rows, pa.string()))
    import pyarrow.compute as pc  # here: ~9 MB of RSS the archive command need not carry

    # whole seconds (a 14-digit timestamp; strftime would print fractions), in UTC
    when = pc.cast(table.column(time_column), pa.timestamp("s", tz="UTC"), safe=False)
    ts = pc.strftime(when, format="%Y%m%d%H%M%S")
    urls = pc.binary_join_element_wise(
        pa.scalar(prefix), ts, pc.cast(table.column(uri_column), pa.string()), "/")
    return table.append_column(name, urls)


def link_name(relative: str) -> str:
    """The collection's file name for a raw WARC (its path under ``raw/warc``, flattened)."""
    return relative.replace("/", "__")


def raw_archives(raw: Path) -> list[Path]:
    """Every WARC/ARC file under ``raw/warc`` (the supplied, fetched and archive-copied ones).
    WACZ files are left out: pywb reads them through ``wb-manager add``, which unpacks them."""
    root = Path(raw) / "warc"
    if not root.is_dir():
        return []
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name.endswith(REPLAY_SUFFIXES))


def build(raw: Path, derived: Path, collection: str) -> tuple[Path, int]:
    """The pywb collection of ``raw``'s WARCs under ``derived/replay``; (its root, files)."""
    from citeaudit.archive.lookup.pywb import find_pywb, run_tool

    bin_dir = find_pywb()
    root = Path(derived) / REPLAY_DIR
    root.mkdir(parents=True, exist_ok=True)
    coll = root / "collections" / collection
    if not coll.is_dir():
        run_tool(bin_dir, root, "wb-manager", "init", collection)
    archive = coll / "archive"
    archive.mkdir(parents=True, exist_ok=True)
    files = raw_archives(raw)
    wanted = {link_name(f.relative_to(Path(raw) / "warc").as_posix()): f.resolve()
              for f in files}
    for old in archive.iterdir():
        if old.is_symlink() and old.name not in wanted:
            old.unlink()
    for name, target in wanted.items():
        link = archive / name
        if link.is_symlink() and link.resolve() == target:
            continue
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)
    run_tool(bin_dir, root, "wb-manager", "reindex", collection)
    return root, len(wanted)


def register_cli(subparsers: Any) -> None:
    """Add ``replay [--raw DIR] --derived DIR [--host H] [--port P]``."""
    p = subparsers.add_parser(
        "replay",
        help="serve the project's WARCs in a local pywb, so replay links open",
        description=(
            "Build a pywb collection (wb-manager, from .venv-pywb: `make pywb`) of every WARC "
            "under RAW/warc in DERIVED/replay (symlinks, nothing copied) and serve it with "
            "`wayback` on HOST:PORT until interrupted. The links in citation_captures, "
            "citation_existence, the review queue and the report open there when "
            "citeaudit.yaml has replay.base_url: http://HOST:PORT (and replay.collection)."),
    )
    p.add_argument("--raw", default="data/raw", help="raw folder (default: data/raw)")
    p.add_argument("--derived", default="data/derived",
                   help="derived folder; the collection goes to DERIVED/replay")
    p.add_argument("--host", default=None,
                   help="address to bind (default: replay.base_url's host, else 127.0.0.1)")
    p.add_argument("--port", type=int, default=None,
                   help="port (default: replay.base_url's port, else 8090)")
    p.add_argument("--build-only", action="store_true",
                   help="build or update the collection, do not serve")
    p.set_defaults(func=_cli_replay)


def _cli_replay(args: Any) -> int:
    from citeaudit import config
    from citeaudit.archive.lookup.pywb import PywbMissing, PywbServer

    err = sys.stderr
    raw, derived = Path(args.raw).resolve(), Path(args.derived).resolve()
    if not raw.is_dir():
        print(f"replay: no such folder: {raw}", file=err)
        return 2
    try:
        settings = config.load(raw).replay
    except config.ConfigError as exc:
        print(f"replay: {exc}", file=err)
        return 2
    base = urlsplit(settings.base_url) if settings.base_url else None
    host = args.host or (base.hostname if base else None) or "127.0.0.1"
    port = args.port or (base.port if base else None) or 8090
    try:
        root, n = build(raw, derived, settings.collection)
    except PywbMissing as exc:
        print(f"replay: {exc}", file=err)
        return 2
    except RuntimeError as exc:
        print(f"replay: {exc}", file=err)
        return 1
    print(f"replay: collection {settings.collection!r} in {root}: {n} WARC file(s)", file=err)
    if args.build_only:
        return 0
    server = PywbServer(root, host=host, port=port)

    def stop(signum, frame) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        server.start()
        print(f"replay: serving {server.base_url}/{settings.collection}/ (Ctrl-C stops)",
              file=err, flush=True)
        if settings.base_url != server.base_url:
            print(f"replay: set replay.base_url: {server.base_url} in {raw / config.CONFIG_FILE} "
                  "so the tables' replay_url links point here", file=err, flush=True)
        assert server.proc is not None
        server.proc.wait()
        print(f"replay: wayback exited ({server.proc.returncode}); see {server.log}", file=err)
        return 1
    except KeyboardInterrupt:
        return 0
    except RuntimeError as exc:
        print(f"replay: {exc}", file=err)
        return 1
    finally:
        server.stop()
