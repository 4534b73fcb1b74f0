"""Archive: what the WARC/ARC files hold for each URL, in three rooms.

- :mod:`citeaudit.archive.index`: every WARC/ARC/WACZ record of interest becomes one row (SURT
  key, status, redirect, digests verified, revisits, truncation, an error code for damaged
  bytes) with pywb's offsets and keys; ``index-warc`` prints the same as CDXJ.
- :mod:`citeaudit.archive.capture`: the live crawl (``citeaudit archive``) captures the pages a
  day's answers cite into WARC/1.1, politely, and copies from web archives what it cannot fetch.
- :mod:`citeaudit.archive.lookup`: the public archives' index APIs, replay links and pywb.

A room's ``__init__`` names what other code may use; nothing outside a room imports its modules.
Writes ``fetched_captures``, ``fetch_log`` and ``captures``.
"""
