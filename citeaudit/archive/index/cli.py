"""The ``index-warc`` command: files and directories in, parquet or CDXJ out.

Why here: argument parsing, input expansion, output writing and the stderr summary are the
command line's concerns, not the indexer's; :func:`register_cli` adds the subcommand to
``citeaudit``'s parser.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from citeaudit.archive.index.cdxj import to_cdxj_lines
from citeaudit.archive.index.files import index_paths
from citeaudit.archive.index.schema import CAPTURE_SCHEMA, READERS
from citeaudit.layout import ARCHIVE_SUFFIXES, archive_problem


def iter_archive_files(inputs: Iterable[str | Path]) -> Iterator[tuple[Path, str]]:
    """Expand files and directories into ``(path, name)`` pairs.

    A file is named as given; a file found under a directory is named by its path relative
    to that directory (POSIX separators), as cdxj-indexer's ``--dir-root`` does. Directories
    are searched recursively for ``*.warc``, ``*.warc.gz``, ``*.arc``, ``*.arc.gz``.
    Raises FileNotFoundError for a missing input.
    """
    for item in inputs:
        path = Path(item)
        if path.is_dir():
            found = sorted(
                p for p in path.rglob("*") if p.is_file() and p.name.endswith(ARCHIVE_SUFFIXES)
            )
            for file in found:
                yield file, file.relative_to(path).as_posix()
        elif path.exists():
            yield path, str(item)
        else:
            raise FileNotFoundError(f"no such file or directory: {item}")


def register_cli(subparsers: Any) -> None:
    """Add ``index-warc PATH... [--out F] [--format parquet|cdxj] [--reader R] [--workers N]``."""
    parser = subparsers.add_parser(
        "index-warc",
        help="index WARC/ARC files into a capture table (parquet) or pywb CDXJ",
        description=(
            "Index WARC/ARC files (plain or gzip; directories are searched recursively) into "
            "one row per capture. Without --out, CDXJ goes to stdout and a summary to stderr. "
            "A file whose first bytes are not a WARC, ARC or WACZ file's is refused (exit "
            "status 2, nothing indexed)."
        ),
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="WARC/ARC file or directory")
    parser.add_argument("--out", help="output file (.parquet or .cdxj)")
    parser.add_argument(
        "--format", choices=("parquet", "cdxj"), default=None,
        help="output format (default: from --out's suffix; cdxj on stdout)",
    )
    parser.add_argument("--reader", choices=READERS, default="auto")
    parser.add_argument("--workers", type=int, default=0, help="processes (0: one per CPU)")
    parser.add_argument(
        "--all-records", action="store_true",
        help="also index warcinfo, request, metadata and other records",
    )
    parser.set_defaults(func=_cli_index_warc)


def _cli_index_warc(args: Any) -> int:
    err = sys.stderr
    try:
        files = list(iter_archive_files(args.paths))
    except FileNotFoundError as exc:
        print(f"index-warc: {exc}", file=err)
        return 2
    if not files:
        print("index-warc: no *.warc, *.warc.gz, *.arc or *.arc.gz files found in "
              + ", ".join(map(str, args.paths)), file=err)
        return 2
    refused = [(name, problem) for path, name in files
               if (problem := archive_problem(path)) is not None]
    for name, (reason, detail) in refused:
        print(f"index-warc: {name}: not a WARC, ARC or WACZ file ({reason}: {detail}); "
              "give WARC/ARC files (plain or gzip) or a .wacz", file=err)
    if refused:
        print(f"index-warc: nothing indexed ({len(refused)} of {len(files)} file(s) refused)",
              file=err)
        return 2
    fmt = args.format
    if fmt is None:
        fmt = "parquet" if args.out and args.out.endswith(".parquet") else "cdxj"
    if fmt == "parquet" and not args.out:
        print("index-warc: --format parquet needs --out FILE.parquet", file=err)
        return 2
    if args.workers < 0:
        print("index-warc: --workers must be >= 0", file=err)
        return 2

    try:
        if fmt == "parquet":
            summary = _write_parquet(files, args)
            _print_summary(summary.rows, summary.errors, len(files), err)
            return 0
        table = index_paths(
            files, workers=args.workers, reader=args.reader, progress=len(files) > 1,
            all_records=args.all_records,
        )
        if args.out:
            with open(args.out, "w", encoding="utf-8") as out:
                for line in to_cdxj_lines(table):
                    out.write(line + "\n")
        else:
            out = sys.stdout
            for line in to_cdxj_lines(table):
                out.write(line + "\n")
    except OSError as exc:
        print(f"index-warc: cannot write {args.out}: {exc.strerror or exc}", file=err)
        return 1
    except ValueError as exc:  # the same file named twice
        print(f"index-warc: {exc}", file=err)
        return 2
    _print_summary(table.num_rows, _errors_by_code(table), len(files), err)
    return 0


def _write_parquet(files: list[tuple[Path, str]], args: Any) -> Any:
    """Stream the index into ``args.out`` (row groups, sorted, atomic); return the summary."""
    from citeaudit.archive.index.stream import ROW_GROUP_ROWS, streamed_index
    from citeaudit.parquet_io import write_batches

    with streamed_index(
        files, workers=args.workers, reader=args.reader, progress=len(files) > 1,
        all_records=args.all_records,
    ) as (batches, summary):
        write_batches(batches, CAPTURE_SCHEMA, Path(args.out), row_group_rows=ROW_GROUP_ROWS)
    return summary


def _errors_by_code(table: pa.Table) -> dict[str, set[str]]:
    errors: dict[str, set[str]] = {}
    for file, error in zip(
        table.column("file").to_pylist(), table.column("error").to_pylist(), strict=True
    ):
        if error:
            for code in error.split(";"):
                errors.setdefault(code.split(":", 1)[0], set()).add(file)
    return errors


def _print_summary(rows: int, errors: dict[str, set[str]], n_files: int, stream: Any) -> None:
    """A short summary on stderr: rows, files, and each error with the files it hit."""
    print(f"index-warc: {rows} rows from {n_files} file(s)", file=stream)
    for code, names in sorted(errors.items()):
        listed = ", ".join(sorted(names)[:5]) + (" ..." if len(names) > 5 else "")
        print(f"index-warc: {code} in {len(names)} file(s): {listed}", file=stream)
