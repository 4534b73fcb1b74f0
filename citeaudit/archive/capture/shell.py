"""Script shells: a static capture whose readable content a script has not rendered yet.

A single-page application answers every URL with the same small HTML document: a mount point
(``<div id="root"></div>``), script tags and often a ``<noscript>`` asking for JavaScript. Its
static text holds none of the page's content, so searching a quote in it would report the quote
"not in page" — a negative finding made from missing evidence. Such a capture is recognised here
and treated as unreadable (L1 ``unresolved`` with reason ``script_shell``, no text for L2)
unless a browser rendered it (``fetch.browser``; :mod:`citeaudit.archive.capture.browser`).

The rule is deliberately narrow (a page with a few words of real text and a stray script is not
a shell): the page loads at least one script, its visible body text has at most
:data:`MAX_SHELL_WORDS` words, and either an application mount point is empty or a
``<noscript>`` asks for JavaScript; or it has no visible text at all and only scripts. A
*rendered* DOM keeps its ``<noscript>`` and mount point attributes, so for it only "no visible
text at all" counts (the render produced nothing).

It lives in the capture room because the crawl asks it (``fetch.browser: auto`` renders shells
only); the alignment stage's page signals import it from here.
"""

from __future__ import annotations

import re

MAX_SHELL_WORDS = 120
"""A page with more visible words than this is never a shell (it has content of its own)."""

_MOUNTS = ("#root", "#app", "#__next", "#__nuxt", "#svelte", "#main-app", "#application",
           "#ember-app", "app-root", "[data-reactroot]", "[ng-app]", "[ng-version]",
           "[data-server-rendered]")
_SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script\s*>", re.I | re.S)
_DATA_SCRIPT = re.compile(r"type\s*=\s*[\"']?(application/(ld\+)?json|text/template|"
                          r"text/x-template|importmap)", re.I)
_NOSCRIPT = re.compile(r"<noscript\b[^>]*>(.*?)</noscript\s*>", re.I | re.S)
_NEEDS_JS = re.compile(r"javascript|enable\s+js|\bjs\b.*(enable|required|disabled)", re.I)
_SKIP = ["script", "style", "noscript", "template", "svg"]


def _code_scripts(markup: str) -> int:
    """Scripts that run code: an external ``src`` or inline code (not JSON data)."""
    n = 0
    for m in _SCRIPT.finditer(markup[:2_000_000]):
        attrs, body = m.group(1), m.group(2)
        if _DATA_SCRIPT.search(attrs):
            continue
        if re.search(r"\bsrc\s*=", attrs, re.I) or body.strip():
            n += 1
    return n


def visible_words(markup: str) -> int:
    """Words of the body text outside script/style/noscript/template/svg."""
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(markup[:2_000_000])
    tree.strip_tags(_SKIP)
    root = tree.body or tree.root
    return len((root.text(separator=" ") if root is not None else "").split())


def _empty_mount(markup: str) -> str | None:
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(markup[:2_000_000])
    tree.strip_tags(_SKIP)
    for sel in _MOUNTS:
        for node in tree.css(sel):
            if not (node.text() or "").strip():
                return sel
    return None


def script_shell(markup: str, rendered: bool = False, words: int | None = None) -> str | None:
    """Why ``markup`` (a decoded HTML page) is a script shell, or None when it is not (see the
    module docstring). ``rendered``: the markup is a browser's rendered DOM. ``words``: the
    visible word count when the caller has it."""
    scripts = _code_scripts(markup)
    if scripts == 0:
        return None
    words = visible_words(markup) if words is None else words
    if words == 0:
        return "no visible text, only scripts" if not rendered else "rendered page has no text"
    if rendered or words > MAX_SHELL_WORDS:
        return None
    mount = _empty_mount(markup)
    if mount:
        return f"empty application mount point {mount}"
    if any(_NEEDS_JS.search(m.group(1)) for m in _NOSCRIPT.finditer(markup[:2_000_000])):
        return "<noscript> asks for JavaScript"
    return None


def decoded_html(body: bytes, content_type: str | None, content_encoding: str | None
                 ) -> str | None:
    """The markup of an HTML response body for :func:`script_shell` at crawl time (content
    coding undone, UTF-8 or the declared charset, undecodable bytes replaced), or None when
    the response is not HTML or its coding cannot be undone."""
    mime = (content_type or "").split(";", 1)[0].strip().lower()
    if mime and mime not in ("text/html", "application/xhtml+xml"):
        return None
    data = body
    for coding in reversed([c.strip().lower() for c in (content_encoding or "").split(",")
                            if c.strip() and c.strip().lower() != "identity"]):
        try:
            if coding == "br":
                import brotli

                data = brotli.decompress(data)
            elif coding in ("gzip", "x-gzip", "deflate"):
                import zlib

                data = zlib.decompress(data, 16 + zlib.MAX_WBITS if "gzip" in coding
                                       else zlib.MAX_WBITS)
            else:
                return None
        except Exception:  # a broken body: the page-text step names it
            return None
    m = re.search(r"charset\s*=\s*[\"']?([A-Za-z0-9_.:-]+)", content_type or "", re.I)
    try:
        return data.decode(m.group(1) if m else "utf-8", errors="replace")
    except LookupError:
        return data.decode("utf-8", errors="replace")
