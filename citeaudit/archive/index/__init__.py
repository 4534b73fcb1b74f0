"""The capture index: WARC, ARC and WACZ files read into one row per record of interest.

Readers (FastWARC where it can prove the framing, warcio otherwise), record parsing (HTTP head,
digests, dates, POST query keys), large ``.warc.gz`` files split at gzip member boundaries, and
the streamed many-file index in flat memory all live in this room; what other code uses is
below (the record parts, ``Indexer`` to ``parse_http_headers``, for the benchmark's per-part
ladder). ``citeaudit index-warc`` prints the same rows as pywb-compatible CDXJ.
"""

from citeaudit.archive.index.canonical import Canonical, canonicalize
from citeaudit.archive.index.cdxj import to_cdxj_lines
from citeaudit.archive.index.cli import register_cli
from citeaudit.archive.index.digests import hash_payload
from citeaudit.archive.index.fastwarc_reader import fastwarc_slots
from citeaudit.archive.index.files import index_file, index_file_into, index_paths, iter_index_paths
from citeaudit.archive.index.http_head import parse_http_headers
from citeaudit.archive.index.records import Indexer
from citeaudit.archive.index.schema import CAPTURE_SCHEMA, CAPTURES_TABLE_SCHEMA, with_origin
from citeaudit.archive.index.stream import ROW_GROUP_ROWS, streamed_index
from citeaudit.archive.index.url_keys import clean_target_uri, url_to_urlkey

__all__ = [
    "CAPTURES_TABLE_SCHEMA",
    "CAPTURE_SCHEMA",
    "ROW_GROUP_ROWS",
    "Canonical",
    "Indexer",
    "canonicalize",
    "clean_target_uri",
    "fastwarc_slots",
    "hash_payload",
    "index_file",
    "index_file_into",
    "index_paths",
    "iter_index_paths",
    "parse_http_headers",
    "register_cli",
    "streamed_index",
    "to_cdxj_lines",
    "url_to_urlkey",
    "with_origin",
]
