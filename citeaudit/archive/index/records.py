"""Records -> rows: the consumer that turns one file's reader slots into capture rows.

Why here: this is the one place that decides what a capture row holds: which records get a
row, their HTTP status, mime and redirect, payload hashes and digest verification, dates,
error codes, and the pywb request/response join that keys POST responses by their body.
It reads slots from either reader in :mod:`citeaudit.archive.index.readers` and is used both for
whole files and for the byte ranges of a split file.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa

from citeaudit.archive.index.dates import capture_time_of
from citeaudit.archive.index.digests import (
    HashingReader,
    decode_digest,
    hash_dechunked,
    hash_payload,
    read_capped,
)
from citeaudit.archive.index.http_head import (
    HeadersTooLong,
    mime_of,
    parse_http_headers,
    status_code_of,
)
from citeaudit.archive.index.post_query import POST_BODY_CAP, post_url_suffix
from citeaudit.archive.index.schema import (
    CAPTURE_COLUMNS,
    CAPTURE_SCHEMA,
    join_errors,
    lists_to_batch,
)
from citeaudit.archive.index.slots import Slot
from citeaudit.archive.index.url_keys import clean_target_uri, url_to_urlkey

_HTTP_SCHEMES = ("http:", "https:")
BATCH_ROWS = 1024
"""Rows per record batch out of the indexer (keyed and converted to Arrow together)."""
_NO_COMPUTED_DIGEST = ("warcinfo", "revisit")  # warcio's NO_PAYLOAD_DIGEST_TYPES


# Positions in a row: rows are lists in CAPTURE_SCHEMA's column order (no dict per row;
# a batch of them is transposed into columns in one ``zip``).
_COL = {name: i for i, name in enumerate(CAPTURE_COLUMNS)}
_OFFSET, _LENGTH, _TARGET_URI, _URLKEY = (
    _COL["offset"], _COL["length"], _COL["target_uri"], _COL["urlkey"])
_FILE, _TRUNCATED, _ERROR = _COL["file"], _COL["truncated"], _COL["error"]


def _empty_row(name: str, offset: int) -> list[Any]:
    row: list[Any] = [None] * len(CAPTURE_COLUMNS)
    row[_FILE] = name
    row[_OFFSET] = offset
    return row


class Indexer:
    """Turns the slots of one file into rows (the consumer side of the readers).

    Finished rows leave in record batches of about :data:`BATCH_ROWS`: to ``sink`` as they
    are made when one is given (the streamed index writes them to parquet), else kept in
    ``batches`` for :meth:`table`.
    """

    def __init__(
        self, name: str, all_records: bool,
        sink: Callable[[pa.RecordBatch], None] | None = None,
    ) -> None:
        self.name = name
        self.all_records = all_records
        self.sink = sink
        self.batches: list[pa.RecordBatch] = []
        self.rows: list[list[Any]] = []
        self.pending: list[Slot] = []
        # previous record, for joining request/response pairs:
        # (slot, row, post append str, _join_key of the slot)
        self.prev: tuple[Slot, list | None, str | None, tuple] | None = None
        self.first_key: tuple | None = None  # _join_key of the first slot (split ranges)

    # -- driving ------------------------------------------------------------------------------
    def run(self, slots: Iterator[Slot]) -> None:
        for slot in slots:
            if self.first_key is None:
                self.first_key = _join_key(slot)
            slot.row = self.process(slot)
            self.pending.append(slot)
            self._emit_closed()
        self._emit_closed()

    def _emit_closed(self) -> None:
        done = 0
        for slot in self.pending:
            if not slot.closed:
                break
            done += 1
            row = slot.row
            if row is None:
                continue
            row[_OFFSET] = slot.offset
            row[_LENGTH] = slot.length
            if slot.truncated:
                row[_TRUNCATED] = True
            if slot.errors:
                old = row[_ERROR].split(";") if row[_ERROR] else []
                row[_ERROR] = join_errors(old + slot.errors)
            self.rows.append(row)
        if done:
            del self.pending[:done]
        if len(self.rows) > BATCH_ROWS:  # keep the last row mutable for request/response joins
            self._flush(self.rows[:-1])
            del self.rows[:-1]

    def _flush(self, rows: list[list[Any]]) -> None:
        """Turn finished rows into an Arrow batch, computing their SURT keys on the way.

        Rows carry the URL to key in ``urlkey`` until here: keying a batch of URLs in one
        tight loop is markedly faster than one at a time between payloads (CPU caches),
        and a POST response's key can still change when its request comes after it.
        """
        for row in rows:
            source = row[_URLKEY]
            if source is not None:
                row[_URLKEY] = url_to_urlkey(source)
        batch = lists_to_batch(rows)
        if self.sink is not None:
            self.sink(batch)
        else:
            self.batches.append(batch)

    def finish(self) -> None:
        """Emit every row still held (the walk is over)."""
        for slot in self.pending:  # readers close every slot; this is a safety net
            slot.closed = True
        self._emit_closed()
        if self.rows:
            self._flush(self.rows)
            self.rows = []

    def table(self) -> pa.Table:
        """All rows as one table (without a sink)."""
        self.finish()
        return pa.Table.from_batches(self.batches, CAPTURE_SCHEMA)

    def add_failure_row(self, offset: int, error: str) -> None:
        """A row for a failure that ended the walk early (not expected; never lose it)."""
        row = _empty_row(self.name, offset)
        row[_ERROR] = error
        for slot in self.pending:
            slot.closed = True
        self._emit_closed()
        self.rows.append(row)

    # -- one record ----------------------------------------------------------------------------
    def process(self, slot: Slot) -> list[Any] | None:
        """The row for one slot, or None for a record that is not a capture.

        Reads the record's block: HTTP headers (for status, mime, Location and, in requests,
        the method), then the payload through the hashers. Length and framing errors are
        filled in later from the slot, when the reader closes it.
        """
        if slot.kind == "error":
            self.prev = None
            return _empty_row(self.name, slot.offset)
        headers = slot.headers
        rec_type = slot.rec_type
        uri = clean_target_uri(headers.get("uri"))
        is_arc = slot.kind == "arc"
        if is_arc:
            wanted = rec_type == "response" or self.all_records
        else:
            wanted = self.all_records or rec_type in ("response", "revisit") or (
                rec_type == "resource"
                and headers.get("content_type", "").strip() != "application/warc-fields"
            )
        is_request = rec_type == "request"
        http_record = (
            rec_type in ("response", "request", "revisit")
            and uri is not None
            and uri.startswith(_HTTP_SCHEMES)
            and slot.content_length != 0
        )
        if not wanted and not (is_request and http_record):
            self._join(slot, None, None, uri)
            return None

        block = slot.block
        errors: list[str] = []
        http = None
        header_bytes = head = b""
        if http_record:
            try:
                http, header_bytes, head = parse_http_headers(block)
            except HeadersTooLong as exc:
                errors.append("unreadable_record: " + str(exc))
                block = None
            if http is not None and not http:  # a blank line where headers should be
                http = None

        post_append = None
        method = http.protocol if (is_request and http is not None) else None
        capture_post = method is not None and method.upper() in ("POST", "PUT")

        if not wanted:  # a request that only matters for its POST body
            if capture_post and block is not None:
                raw = head[:POST_BODY_CAP] + read_capped(block, POST_BODY_CAP - len(head))
                post_append = post_url_suffix(method, http, raw, uri)
            self._join(slot, None, post_append, uri)
            return None

        # --- payload: hash it as stored (after the HTTP headers, chunking and all) ---------
        declared = headers.get("payload_digest")
        is_revisit = rec_type == "revisit"
        algo = expected = None
        if declared and not is_revisit:
            algo, expected = decode_digest(declared)
        sha256 = hashlib.sha256()
        hashers = [sha256]
        verifier = None
        whole_block = False
        if algo is not None:
            whole_block = bool(header_bytes) and declared == headers.get("block_digest")
            if algo == "sha256" and not whole_block:
                verifier = sha256
            else:
                verifier = hashlib.new(algo)
                if whole_block:  # ClueWeb09: "payload" digest taken over the whole block
                    verifier.update(header_bytes)
                hashers.append(verifier)
        computed = None
        if not declared and rec_type not in _NO_COMPUTED_DIGEST:
            computed = hashlib.sha1()
            hashers.append(computed)
        # Chunked bodies are stored with their chunk framing; most tools (warcio among
        # them) digest them as stored, the WARC spec says after removing the framing.
        # Accept either: hash the de-chunked body too (only for chunked records).
        dechunked_verifier = None
        if (
            verifier is not None
            and not whole_block
            and http is not None
            and "chunked" in (http.get_header("transfer-encoding") or "").lower()
        ):
            dechunked_verifier = hashlib.new(algo)
        body_head = bytearray() if capture_post else None
        size = 0
        if block is not None and dechunked_verifier is None and body_head is None:
            size = hash_payload(head, block, hashers)
        elif block is not None:
            hashing = HashingReader(head, block, [h.update for h in hashers], body_head)
            if dechunked_verifier is not None:
                hash_dechunked(hashing, dechunked_verifier)
            hashing.drain()
            size = hashing.size
        if body_head is not None and block is not None:
            post_append = post_url_suffix(method, http, bytes(body_head), uri)

        # --- fields ------------------------------------------------------------------------
        date_raw = headers.get("date")
        if is_arc:
            parts = slot.first_line.rstrip(b"\r\n").rsplit(b" ", 4)
            date_raw = parts[2].decode("latin-1") if len(parts) == 5 else date_raw
            when, timestamp = capture_time_of(headers.get("date"))
        else:
            when, timestamp = capture_time_of(date_raw)
        if when is None:
            errors.append("invalid_warc_date")

        status = None
        if http is not None and rec_type in ("response", "revisit"):
            status = status_code_of(http)
        if status is None and rec_type == "response" and uri and uri.startswith(_HTTP_SCHEMES):
            errors.append("arc_missing_status" if is_arc else "missing_http_status")

        if is_revisit:
            mime = "warc/revisit"
        elif rec_type in ("response", "request"):
            mime = mime_of(http.get_header("content-type")) if http is not None else None
        else:
            mime = mime_of(headers.get("content_type"))

        readable = block is not None
        if is_revisit or not declared or algo is None or not readable:
            verified = None
        else:
            verified = expected is not None and (
                verifier.digest() == expected
                or (dechunked_verifier is not None and dechunked_verifier.digest() == expected)
            )

        row = [  # CAPTURE_SCHEMA's order
            self.name,
            slot.offset,
            None,  # length: from the slot when the reader closes it
            rec_type,
            uri,
            uri or None,  # urlkey: the URL to key; SURT-ed in _flush
            when,
            timestamp,
            status,
            http.get_header("location") if status is not None and 300 <= status < 400 else None,
            mime,
            declared,
            verified,
            sha256.hexdigest() if readable and not is_revisit else None,
            size if readable and not is_revisit else None,
            declared
            or ("sha1:" + base64.b32encode(computed.digest()).decode() if computed else None),
            headers.get("refers_uri"),
            headers.get("refers_date"),
            None if is_arc else headers.get("id"),
            date_raw,
            "truncated" in headers,
            join_errors(errors),
        ]
        self._join(slot, row, post_append, uri)
        return row

    def _join(
        self, slot: Slot, row: list | None, post_append: str | None, uri: str | None
    ) -> None:
        """Pair adjacent request/response records (pywb) to key POST responses by body.

        ``uri`` is the slot's cleaned target URI (already computed by the caller).
        """
        key = _join_key(slot, uri)
        prev, self.prev = self.prev, (slot, row, post_append, key)
        if prev is None:
            return
        order = pair_order(prev[3], key)
        if not order:
            return
        first, second = prev, (slot, row, post_append)
        req, resp = (first, second) if order == 1 else (second, first)
        self.prev = None  # a pair is consumed, as in pywb/cdxj-indexer
        append = req[2]
        resp_row = resp[1]
        if append and resp_row is not None and resp_row[_TARGET_URI] is not None:
            url = clean_target_uri(req[0].headers.get("uri")) or resp_row[_TARGET_URI]
            resp_row[_URLKEY] = url + append  # keyed with the body query in _flush


def _join_key(slot: Slot, uri: str | None = None) -> tuple:
    """What decides whether two adjacent records pair: (kind, type, URI, id, concurrent-to).

    ``uri``: the slot's cleaned target URI when the caller has it (else cleaned here).
    """
    headers = slot.headers
    if uri is None:
        uri = clean_target_uri(headers.get("uri"))
    return slot.kind, slot.rec_type, uri, headers.get("id"), headers.get("concurrent_to")


def pair_order(a: tuple, b: tuple) -> int:
    """Whether record ``b`` pairs with the record ``a`` before it (pywb's request/response join).

    0: no pair; 1: ``a`` is the request and ``b`` its response (or revisit); 2: ``b`` is the
    request of response ``a``. Both must be WARC records with the same target URI, and
    ``b``'s WARC-Concurrent-To must be ``a``'s WARC-Record-ID (both missing counts, as in
    pywb). Arguments are :func:`_join_key` tuples.
    """
    if a[0] != "warc" or b[0] != "warc" or a[2] != b[2] or b[4] != a[3]:
        return 0
    if a[1] == "request" and b[1] in ("response", "revisit"):
        return 1
    if b[1] == "request" and a[1] in ("response", "revisit"):
        return 2
    return 0
