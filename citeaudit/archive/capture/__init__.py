"""Capturing pages: what a day's answers cite, fetched live or copied from web archives, into
our own WARC files, with one ``fetch_log`` row per attempt.

The crawl plan (SQL against the captures already on disk), the polite fetcher (one connection
per host, robots.txt obeyed, bounded retries), the archive source (asks the archives of
:mod:`citeaudit.archive.lookup` for what is still missing), the WARC/1.1 writer and
``citeaudit archive`` live in this room; what other code uses is below.
"""

from citeaudit.archive.capture.browser import find_chromium
from citeaudit.archive.capture.crawl import archive_date, canonical_url
from citeaudit.archive.capture.fetch_cli import register_cli
from citeaudit.archive.capture.fetch_log import CrawlResult, lean_process, read_logs
from citeaudit.archive.capture.fetcher import http_get
from citeaudit.archive.capture.scope import origin_of
from citeaudit.archive.capture.shell import script_shell
from citeaudit.archive.capture.warc_writer import (
    RENDERED_URN,
    fetched_files,
    file_origin,
    is_fetched_file,
)
from citeaudit.archive.capture.windows import window_warnings

__all__ = [
    "RENDERED_URN",
    "CrawlResult",
    "archive_date",
    "canonical_url",
    "fetched_files",
    "file_origin",
    "find_chromium",
    "http_get",
    "is_fetched_file",
    "lean_process",
    "origin_of",
    "read_logs",
    "register_cli",
    "script_shell",
    "window_warnings",
]
