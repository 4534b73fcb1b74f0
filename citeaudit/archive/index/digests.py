"""Digests: decoding WARC digest values and hashing payloads as they are read.

Why here: verifying ``WARC-Payload-Digest`` and computing ``payload_sha256`` / ``cdx_digest``
needs three things kept apart from record parsing: decoding ``algo:value`` in any of the
encodings seen in the wild (base32, base16, base64), a reader that feeds every payload byte
to the hashers in one pass (flat memory), and hashing a chunked body with its framing removed.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import re
from typing import Any

from citeaudit.archive.index.post_query import POST_BODY_CAP
from citeaudit.archive.index.slots import BLOCK_SIZE

_HASH_NAMES: dict[str, str | None] = {}


def _hash_name(algo: str) -> str | None:
    """hashlib name for a WARC digest algorithm label (``sha1``, ``SHA-256``, ...)."""
    name = _HASH_NAMES.get(algo)
    if name is None and algo not in _HASH_NAMES:
        name = algo.strip().lower().replace("-", "").replace("_", "")
        name = _HASH_NAMES[algo] = name if name in hashlib.algorithms_available else None
    return name


_B32_TO_INT = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567abcdefghijklmnopqrstuvwxyz",
    "0123456789abcdefghijklmnopqrstuv0123456789abcdefghijklmnop",
)
_RE_B32 = re.compile(r"[A-Za-z2-7]+=*")
_RE_HEX = re.compile(r"[0-9A-Fa-f]+")
_DIGEST_SIZES: dict[str, int] = {}


def _b32_bytes(encoded: str, size: int) -> bytes | None:
    """RFC 4648 base32 (any case, padding optional) -> ``size`` bytes, via ``int`` (fast)."""
    if not _RE_B32.fullmatch(encoded):
        return None
    chars = encoded.rstrip("=")
    extra = 5 * len(chars) - 8 * size
    if not 0 <= extra < 5:
        return None
    return (int(chars.translate(_B32_TO_INT), 32) >> extra).to_bytes(size, "big")


def decode_digest(value: str) -> tuple[str | None, bytes | None]:
    """Split ``algo:value`` and decode the value (base32, base16 or base64/base64url).

    Returns ``(hashlib name, digest bytes)``; the name is None for an unknown algorithm, the
    bytes are None when the value cannot be a digest of that algorithm (it can never match).
    """
    algo, sep, encoded = value.partition(":")
    if not sep:
        return None, None
    name = _hash_name(algo)
    if name is None:
        return None, None
    size = _DIGEST_SIZES.get(name)
    if size is None:
        size = _DIGEST_SIZES[name] = hashlib.new(name).digest_size
    encoded = encoded.strip()
    if len(encoded) == 2 * size and _RE_HEX.fullmatch(encoded):
        return name, bytes.fromhex(encoded)
    raw = _b32_bytes(encoded, size)
    if raw is not None:
        return name, raw
    alt = b"-_" if ("-" in encoded or "_" in encoded) else None
    try:
        raw = base64.b64decode(encoded + "=" * (-len(encoded) % 4), altchars=alt, validate=True)
    except (ValueError, binascii.Error):
        return name, None
    return name, raw if len(raw) == size else None


class HashingReader:
    """Reads a payload (``head`` already read, then ``block``) and feeds every byte to hashers.

    Also counts the bytes and keeps the first ``POST_BODY_CAP`` of them in ``capture`` when
    given. Has ``read``/``readline`` so warcio's ChunkedDataReader can pull through it.
    """

    __slots__ = ("_head", "_block", "_updates", "_capture", "size")

    def __init__(
        self, head: bytes, block: Any, updates: list[Any], capture: bytearray | None
    ) -> None:
        self._head = io.BytesIO(head) if head else None
        self._block = block
        self._updates = updates
        self._capture = capture
        self.size = 0

    def _feed(self, data: bytes) -> bytes:
        if data:
            self.size += len(data)
            for update in self._updates:
                update(data)
            capture = self._capture
            if capture is not None and len(capture) < POST_BODY_CAP:
                capture += data[: POST_BODY_CAP - len(capture)]
        return data

    def read(self, size: int = BLOCK_SIZE) -> bytes:
        if self._head is not None:
            data = self._head.read(size)
            if data:
                return self._feed(data)
            self._head = None
        return self._feed(self._block.read(size))

    def readline(self, size: int = BLOCK_SIZE) -> bytes:
        if self._head is not None:
            data = self._head.readline(size)
            if data:
                if not data.endswith(b"\n") and len(data) < size:
                    data += self._block.readline(size - len(data))
                return self._feed(data)
            self._head = None
        return self._feed(self._block.readline(size))

    def drain(self) -> None:
        while self.read(BLOCK_SIZE):
            pass


def hash_payload(head: bytes, block: Any, hashers: list[Any]) -> int:
    """Feed ``head`` and then the rest of ``block`` to every hasher; return the byte count.

    What :class:`HashingReader` does when nothing else reads the payload (no de-chunking,
    no POST body to keep), without its per-read wrapper.
    """
    size = len(head)
    if head:
        for hasher in hashers:
            hasher.update(head)
    read = block.read
    while data := read(BLOCK_SIZE):
        size += len(data)
        for hasher in hashers:
            hasher.update(data)
    return size


def hash_dechunked(raw: HashingReader, hasher: Any) -> None:
    """Hash the body with its chunked framing removed (warcio's ChunkedDataReader)."""
    from warcio.bufferedreaders import ChunkedDataReader

    dechunked = ChunkedDataReader(raw, block_size=BLOCK_SIZE)
    try:
        while data := dechunked.read(BLOCK_SIZE):
            hasher.update(data)
    except Exception:  # framing beyond repair: only the digest as stored can match
        hasher.update(b"\x00not-chunked")


def read_capped(block: Any, cap: int) -> bytes:
    parts, size = [], 0
    while size < cap:
        chunk = block.read(min(BLOCK_SIZE, cap - size))
        if not chunk:
            break
        parts.append(chunk)
        size += len(chunk)
    return b"".join(parts)
