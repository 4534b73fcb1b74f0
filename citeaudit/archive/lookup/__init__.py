"""Public web archives and replay: how to ask an archive for the capture of a URL closest to a
time, and a local pywb that replays our own WARCs.

The archives' index APIs (pywb/OpenWayback CDX, the Wayback Machine's CDX and availability
APIs, Memento TimeGates) and how their answers are read, the replay links of aligned captures
and the pywb programs (``citeaudit replay``) live in this room; what other code uses is below.
"""

from citeaudit.archive.lookup.archives import (
    Candidate,
    choose,
    http_datetime,
    link_relations,
    memento_time,
    memento_url,
    parse_http_datetime,
    parse_index,
    query_url,
    raw_memento_url,
    status_line,
    timegate_url,
    timestamp14,
)
from citeaudit.archive.lookup.pywb import PywbMissing, PywbServer, build_collection, free_port
from citeaudit.archive.lookup.replay import add_replay_column, register_cli

__all__ = [
    "Candidate",
    "PywbMissing",
    "PywbServer",
    "add_replay_column",
    "build_collection",
    "choose",
    "free_port",
    "http_datetime",
    "link_relations",
    "memento_time",
    "memento_url",
    "parse_http_datetime",
    "parse_index",
    "query_url",
    "raw_memento_url",
    "register_cli",
    "status_line",
    "timegate_url",
    "timestamp14",
]
