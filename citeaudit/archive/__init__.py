"""Archive: what the WARC/ARC files hold for each URL. Every record of interest becomes one row
(SURT key, status, redirect, digests verified, revisits, truncation, an error code for damaged
bytes) with pywb's offsets and keys; ``index-warc`` prints the same as CDXJ. Writes ``captures``.
"""
