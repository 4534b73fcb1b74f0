"""Archive: what the WARC/ARC files hold for each URL. Every record of interest becomes one row
(SURT key, status, redirect, digests verified, revisits, truncation, an error code for damaged
bytes) with pywb's offsets and keys; ``index-warc`` prints the same as CDXJ. The live crawl
(``crawl``, ``fetcher``, ``warc_writer``; ``citeaudit archive``) captures the pages a day's answers
cite into WARC/1.1, politely. Writes ``fetched_captures``, ``fetch_log`` and ``captures``.
"""
