"""POST/PUT query keys: the ``__wb_method=post&...`` query pywb appends to a URL key.

Why here: as in pywb, a POST/PUT response is keyed by its request's URL plus a query derived
from the request body (form fields, flattened JSON, multipart fields, or base64 of anything
else), so that replays of different POSTs to one URL stay apart. These are pure functions of
the body and its headers.
"""

from __future__ import annotations

import base64
import io
import json
from typing import Any
from urllib.parse import unquote_plus, urlencode

POST_BODY_CAP = 1 << 20
"""Bytes of a POST/PUT body read to build its ``__wb_method=post`` key (pywb reads it all)."""

MAX_POST_QUERY = 4096
"""pywb/cdxj-indexer cut the body query to this many characters."""


def _decoded_body(raw: bytes, http: Any) -> bytes:
    """Undo chunking and content-encoding of a captured request body, as warcio does."""
    from warcio.bufferedreaders import BufferedReader, ChunkedDataReader

    encoding = (http.get_header("content-encoding") or "").lower() or None
    if encoding not in BufferedReader.get_supported_decompressors():
        encoding = None
    try:
        if http.get_header("transfer-encoding") == "chunked":
            return ChunkedDataReader(io.BytesIO(raw), decomp_type=encoding).read()
        if encoding:
            return BufferedReader(io.BytesIO(raw), decomp_type=encoding).read()
    except Exception:
        return raw
    return raw


def _json_query(data: bytes) -> str:
    """Flatten a JSON body into ``key=value`` pairs like pywb (``name.2_`` for repeats)."""
    out: dict[str, str] = {}
    dupes: dict[str, int] = {}

    def key(name: str) -> str:
        if name not in out:
            return name
        dupes[name] = dupes.get(name, 1) + 1
        return f"{name}.{dupes[name]}_"

    def walk(obj: Any, name: str = "") -> None:
        if isinstance(obj, dict):
            for child, value in obj.items():
                walk(value, child)
        elif isinstance(obj, list):
            for value in obj:
                walk(value, name)
        elif name:
            out[key(name)] = str(obj)

    try:
        walk(json.loads(data))
    except json.JSONDecodeError:
        if b"\n" not in data:
            raise
        for line in data.split(b"\n"):
            walk(json.loads(line))
    return urlencode(out)


def _multipart_query(mime: str, data: bytes) -> str:
    import email
    import email.policy

    message = email.message_from_bytes(
        b"Content-Type: " + mime.encode("latin-1", "replace") + b"\r\n\r\n" + data,
        policy=email.policy.compat32,
    )
    values: list[tuple[str, Any]] = []
    for part in message.get_payload() if message.is_multipart() else []:
        name = part.get_param("name", header="content-disposition") or ""
        body = part.get_payload(decode=True) or b""
        if part.get_filename():
            values.append((str(name), body))
        else:
            values.append((str(name), body.decode("utf-8", "replace")))
    return urlencode(values, True)


def post_query(mime: str | None, data: bytes) -> str:
    """The query pywb derives from a POST/PUT body (cdxj-indexer's ``query_extract``).

    Form bodies are unquoted, JSON bodies flattened, multipart fields urlencoded, anything
    else becomes ``__wb_post_data=<base64>``; the result is cut to 4096 characters.
    Differences from cdxj-indexer: multipart is parsed with the standard library's email
    parser, and AMF bodies are treated as binary (base64).
    """
    mime = mime or ""

    def binary() -> str:
        return "__wb_post_data=" + base64.b64encode(data).decode("ascii")

    if mime.startswith("application/x-www-form-urlencoded"):
        try:
            query = unquote_plus(data.decode("utf-8"))
        except UnicodeDecodeError:
            query = binary()
    elif mime.startswith("multipart/"):
        if "boundary=" not in mime:
            query = binary()
        else:
            try:
                query = _multipart_query(mime, data)
            except Exception:
                query = binary()
    elif mime.startswith("application/json"):
        try:
            query = _json_query(data)
        except Exception:
            query = ""
    elif mime.startswith("text/plain"):
        try:
            query = _json_query(data)
        except Exception:
            query = binary()
    else:
        query = binary()
    return query[:MAX_POST_QUERY]


def post_url_suffix(method: str, http: Any, raw_body: bytes, url: str) -> str:
    """``?__wb_method=POST&<query>`` (or ``&...``) to append to the request URL."""
    length_header = http.get_header("content-length")
    query: str | None
    try:
        length = int(length_header) if length_header is not None else 8192
    except ValueError:
        query = None
    else:
        body = _decoded_body(raw_body, http)[: max(length, 0)]
        query = post_query(http.get_header("content-type"), body)
    append = ("&" if "?" in url else "?") + "__wb_method=" + method
    if query:
        append += "&" + query
    return append
