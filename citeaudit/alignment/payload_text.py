"""Payload text: each distinct archived payload read once from its WARC and turned into text.

Why here: L2 passage checks search the cited quote in the text of the capture the citation is
aligned with, so the text must be the page as archived: the HTTP body after transfer and
content coding (chunked, gzip, deflate, br: warcio's ``content_stream``), decoded with the
declared charset (HTTP ``Content-Type``, else ``<meta charset>``, else detection — the EUC-JP
pages of ClueWeb declare theirs), then HTML turned into text.

The extractor is selectolax (Lexbor): the text nodes of ``<body>`` outside script/style/
noscript/template/svg, each stripped, joined by ``"\\n"``. That is the convention the offsets
engines record (``chunk_offset``) follow in our corpora, and it keeps every text node — a
main-content extractor such as resiliparse's would drop navigation and lists a quote may come
from. The comparison on the Common Crawl excerpt is in docs/architecture.md.

A payload that cannot be read or decoded gets an ``error`` and no text (passage checks then
say ``unresolved``), never an empty text that would read as "quote absent".
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa

from citeaudit import storage
from citeaudit.archive.capture import RENDERED_URN

EXTRACTOR = "selectolax-lexbor"
SKIP_TAGS = ["script", "style", "noscript", "template", "svg"]
HTML_MIMES = ("text/html", "application/xhtml+xml")
TEXT_MIMES = ("text/plain",)
MAX_BYTES = 20 * 1024 * 1024
# Work per page (docs/limits.md). The HTML parser's time grows with the square of the nesting
# depth (100,000 nested <div>s: about 40 s; 1M: hours), so nesting is counted on the tags
# before parsing and a page deeper than MAX_HTML_DEPTH is not parsed (``html_too_deep``); real
# pages nest a few dozen levels, and 1,000 parse in milliseconds. A page whose text passes
# MAX_TEXT_CHARS is ``text_too_large``. Either is the payload's ``error``: no text, so its
# passage checks are unresolved, never "quote absent".
MAX_HTML_DEPTH = 1_000
MAX_TEXT_CHARS = 10_000_000
# Elements that hold no content, whose end tag may be left out (the parser closes them when a
# sibling opens), or that close an open one of their kind (a, nobr, button, form): no depth.
_NO_DEPTH = frozenset("""
area base br col embed hr img input link meta param source track wbr keygen command basefont
bgsound frame image isindex nextid spacer
p li dt dd option optgroup tr td th thead tbody tfoot colgroup rb rt rtc rp caption head body
html a nobr button form
""".split())  # noqa: SIM905
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9:-]*)")
_RAW_TEXT = re.compile(r"<(script|style|textarea|title|xmp|noscript|template|svg)\b.*?</\1\s*>",
                       re.I | re.S)
_COMMENT = re.compile(r"<!--.*?-->", re.S)


class PageTooComplex(ValueError):
    """A page not turned into text because it passes a work limit: ``reason`` is the
    payload's error code (``html_too_deep``, ``text_too_large``)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


def nesting_depth(markup: str, limit: int = MAX_HTML_DEPTH) -> int:
    """The deepest element nesting of ``markup``, counted on its tags without parsing (script,
    style and comment contents left out; void elements and elements whose end tag is optional
    add none; an end tag closes only an element of its name that is open); stops counting past
    ``limit``. An over-estimate for some broken pages, never needed exact."""
    text = _COMMENT.sub("", _RAW_TEXT.sub("", markup))
    open_by_name: dict[str, int] = {}
    depth = deepest = 0
    for m in _TAG.finditer(text):
        name = m.group(2).lower()
        if name in _NO_DEPTH:
            continue
        if m.group(1):  # an end tag
            if open_by_name.get(name, 0) > 0:
                open_by_name[name] -= 1
                depth -= 1
            continue
        open_by_name[name] = open_by_name.get(name, 0) + 1
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                break
    return deepest

PAYLOAD_TEXT_SCHEMA = pa.schema(
    [
        pa.field("payload_sha256", pa.string()),
        pa.field("file", pa.string()),
        pa.field("offset", pa.int64()),
        pa.field("mime", pa.string()),
        pa.field("charset", pa.string()),
        pa.field("content_encoding", pa.string()),
        pa.field("extractor", pa.string()),
        pa.field("text", pa.string()),
        pa.field("text_length", pa.int64()),
        pa.field("error", pa.string()),
        pa.field("title", pa.string()),
        pa.field("not_found_signal", pa.string()),
        pa.field("wall", pa.string()),
    ]
)

_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:-]+)", re.I)


def _charset_of(content_type: str | None) -> str | None:
    if not content_type:
        return None
    m = re.search(r"charset\s*=\s*[\"']?([A-Za-z0-9_.:-]+)", content_type, re.I)
    return m.group(1).lower() if m else None


# Codecs Python knows that no web page is written in: text transforms (a declared
# ``charset=unicode_escape`` would turn ``\\N{...}`` into other text) and ``undefined``. The
# bytes-to-bytes codecs (rot13, zlib, base64, ...) are refused by ``bytes.decode`` itself.
NOT_CHARSETS = frozenset({"unicode_escape", "raw_unicode_escape", "punycode", "idna",
                          "undefined", "utf_7", "utf-7"})


def _decode_as(body: bytes, cs: str) -> str | None:
    """``body`` decoded as ``cs`` (undecodable bytes replaced), or None when ``cs`` is no
    charset a page can declare (unknown, a transform codec, or one that fails)."""
    import codecs

    try:
        name = codecs.lookup(cs).name
    except (LookupError, ValueError, TypeError):
        return None
    if name in NOT_CHARSETS or name.replace("-", "_") in NOT_CHARSETS:
        return None
    try:
        return body.decode(name, errors="replace")
    except (LookupError, UnicodeError, ValueError, TypeError):
        return None


def decode_body(body: bytes, content_type: str | None) -> tuple[str, str]:
    """(text, charset used): declared HTTP charset, else ``<meta>``, else detection.

    An unknown charset label (or a codec that is no charset: ``rot13``, ``zlib``,
    ``unicode_escape``) falls through to the next source; undecodable bytes are replaced
    (U+FFFD), so a stray byte never loses the page.
    """
    from resiliparse.parse.encoding import detect_encoding

    candidates = [_charset_of(content_type)]
    m = _META_CHARSET.search(body[:4096])
    candidates.append(m.group(1).decode("ascii", "replace").lower() if m else None)
    for cs in candidates:
        if not cs:
            continue
        text = _decode_as(body, cs)
        if text is not None:
            return text, cs
    cs = detect_encoding(body[:65536]) or "utf-8"
    text = _decode_as(body, cs)
    if text is None:
        cs, text = "utf-8", body.decode("utf-8", errors="replace")
    return text, cs


def html_to_text(markup: str) -> str:
    """Body text nodes (scripts and styles skipped), each stripped, joined by newlines.

    :class:`PageTooComplex` when the page nests deeper than :data:`MAX_HTML_DEPTH` (checked
    before parsing) or its text passes :data:`MAX_TEXT_CHARS`."""
    from selectolax.lexbor import LexborHTMLParser

    depth = nesting_depth(markup)
    if depth > MAX_HTML_DEPTH:
        raise PageTooComplex("html_too_deep", f"elements nested more than {MAX_HTML_DEPTH} "
                             "levels deep")
    tree = LexborHTMLParser(markup)
    tree.strip_tags(SKIP_TAGS)
    root = tree.body or tree.root
    if root is None:
        return ""
    parts, size = [], 0
    for node in root.traverse(include_text=True):
        if node.tag == "-text":
            text = (node.text_content or "").strip()
            if text:
                parts.append(text)
                size += len(text) + 1
                if size > MAX_TEXT_CHARS:
                    raise PageTooComplex("text_too_large", f"more than {MAX_TEXT_CHARS:,} "
                                         "characters of text")
    return "\n".join(parts)


def read_payload(path: Path, offset: int, info: dict | None = None
                 ) -> tuple[bytes, str | None, str | None, str | None]:
    """(decoded body, content type, content encoding, error) of the record at ``offset``.

    warcio's ``content_stream`` undoes chunked transfer coding and gzip/deflate/br content
    coding; a body it cannot decode is reported, not guessed. A record without HTTP headers (a
    ``resource`` record: a browser's rendered DOM) has its WARC Content-Type. ``info``, when
    given, receives the record's ``target_uri``.
    """
    from warcio.archiveiterator import ArchiveIterator

    with storage.open_binary(path) as fh:
        fh.seek(offset)
        for record in ArchiveIterator(fh):
            http = record.http_headers
            ctype = http.get_header("content-type") if http else \
                record.rec_headers.get_header("Content-Type")
            enc = http.get_header("content-encoding") if http else None
            if info is not None:
                info["target_uri"] = record.rec_headers.get_header("WARC-Target-URI")
            try:
                body = record.content_stream().read(MAX_BYTES + 1)
            except Exception as exc:  # zlib/brotli errors: a broken body, named
                return b"", ctype, enc, f"undecodable_body: {type(exc).__name__}"
            if len(body) > MAX_BYTES:  # a cut page would read as "the quote is not there"
                return b"", ctype, enc, (f"body_too_large: more than {MAX_BYTES:,} bytes "
                                         "decoded (docs/limits.md)")
            return body, ctype, enc, None
    return b"", None, None, "no_record_at_offset"


def extract_one(path: Path, offset: int) -> dict:
    """One payload_texts row (without the digest) for the record at ``path``/``offset``."""
    row = {"mime": None, "charset": None, "content_encoding": None, "extractor": None,
           "text": None, "text_length": None, "error": None, "title": None,
           "not_found_signal": None, "wall": None}
    if not path.is_file():
        row["error"] = "warc_file_missing"
        return row
    info: dict = {}
    try:
        body, ctype, enc, err = read_payload(path, offset, info)
    except Exception as exc:  # an unreadable WARC member: reported with the payload
        body, ctype, enc, err = b"", None, None, f"unreadable_record: {type(exc).__name__}"
    mime = (ctype or "").split(";", 1)[0].strip().lower() or None
    row.update(mime=mime, content_encoding=enc)
    if err:
        row["error"] = err
        return row
    if mime is not None and mime not in HTML_MIMES + TEXT_MIMES:
        row["error"] = "unsupported_mime"
        return row
    text, cs = decode_body(body, ctype)
    row["charset"] = cs
    if mime in TEXT_MIMES:
        if len(text) > MAX_TEXT_CHARS:
            row["error"] = f"text_too_large: more than {MAX_TEXT_CHARS:,} characters"
            return row
        row.update(extractor="plain", text=text)
    else:
        try:
            row.update(extractor=EXTRACTOR, text=html_to_text(text))
        except PageTooComplex as exc:
            row["error"] = str(exc)
            return row
        _add_page_facts(row, text, rendered=str(info.get("target_uri") or "").startswith(
            RENDERED_URN))
    row["text_length"] = len(row["text"]) if row["text"] is not None else None
    return row


def _add_page_facts(row: dict, markup: str, rendered: bool = False) -> None:
    """Title, not-found signal and wall (:mod:`citeaudit.alignment.page_signals`); a wall's
    text is withheld (``error`` ``page_unavailable: <kind>``): what stands there is not the
    cited page, so no later step may read it as the page that lacks the evidence. A static
    capture of a script-rendered page (``script_shell``) is withheld the same way; ``rendered``:
    the markup is a browser's rendered DOM."""
    from citeaudit.alignment.page_signals import page_facts

    facts = page_facts(markup, row["text"], rendered=rendered)
    row.update(title=facts.title, not_found_signal=facts.not_found, wall=facts.wall)
    if facts.wall:
        row.update(text=None, error=f"page_unavailable: {facts.wall} ({facts.wall_evidence})")


def extract_payloads(aligned: pa.Table, raw: Path) -> pa.Table:
    """The ``payload_texts`` table: one row per distinct payload of a usable aligned capture.

    Only captures whose alignment resolved (no ``resolution_issue``) with a 2xx final status
    are read; each payload digest is read and extracted once, in digest order.
    """
    from citeaudit import duck

    con = duck.connect()
    con.register("aligned", aligned)
    todo = duck.query(con, "alignment/select_payloads_to_extract").to_pylist()
    rows: dict[str, list] = {n: [] for n in PAYLOAD_TEXT_SCHEMA.names}
    for item in todo:
        file, offset = item["file"], int(item["offset"])
        row = extract_one(storage.path(raw) / file, offset)
        row.update(payload_sha256=item["payload_sha256"], file=file, offset=offset)
        for name in PAYLOAD_TEXT_SCHEMA.names:
            rows[name].append(row[name])
    return pa.table(rows, schema=PAYLOAD_TEXT_SCHEMA)
