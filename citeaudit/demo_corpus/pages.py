"""Archived pages of the demo corpus: their text (with the offsets answers cite) and their HTML.

A page is built once by :class:`_Builder`, which emits the HTML and the page's *text* side by
side, so the offsets recorded in answers (``chunk_offset``), support annotations
(``evidence_span``) and source-risk evidence always point into the text that
:func:`extract_text` recovers from the archived HTML.

Page-text convention (what every offset in the corpus refers to): the text nodes of ``<body>``,
skipping ``<script>``, ``<style>``, ``<noscript>``, ``<template>`` and ``<svg>``, HTML entities
decoded, each node stripped of surrounding whitespace, empty nodes dropped, joined with ``"\\n"``.
Every block (heading, paragraph, list item, link) is a single text node, so a sentence is never
split by inline markup.
"""

from __future__ import annotations

import base64
import html
import json
from dataclasses import dataclass
from functools import lru_cache
from html.parser import HTMLParser

from citeaudit.demo_corpus import vocab
from citeaudit.demo_corpus.world import (
    KbDoc,
    WebSource,
    World,
    cap,
    fact,
    kb_doc,
    rng_for,
    slugify,
    stable_hex,
    topic_domain,
    topic_subject,
    web_source,
)

Span = tuple[int, int]


@dataclass(frozen=True)
class PageText:
    """The text of one page version and where its notable sentences are.

    ``facts`` maps a metric to ``(sentence_span, paragraph_span)``; ``sentences`` lists every
    body sentence span (used to quote something irrelevant); ``opinion`` and ``relationship``
    are the spans of the page's verdict and of its relationship statement, when present.
    ``chunks`` (knowledge-base documents only) lists each chunk's paragraph span.
    """

    text: str
    facts: dict[int, tuple[Span, Span]]
    sentences: tuple[Span, ...]
    opinion: Span | None
    relationship: Span | None
    chunks: tuple[Span, ...] = ()


class _Builder:
    """Accumulates HTML and text blocks in lockstep; offsets are into the joined text."""

    def __init__(self, want_html: bool) -> None:
        self.want_html = want_html
        self.parts: list[str] = []
        self.blocks: list[str] = []
        self.pos = 0  # length of "\n".join(blocks)

    def raw(self, markup: str) -> None:
        if self.want_html:
            self.parts.append(markup)

    def el(self, tag: str, text: str, attrs: str = "") -> Span:
        """One element whose whole content is ``text``; returns its span in the page text."""
        if self.want_html:
            self.parts.append(f"<{tag}{attrs}>{html.escape(text, quote=False)}</{tag}>\n")
        start = self.pos + (1 if self.blocks else 0)
        self.blocks.append(text)
        self.pos = start + len(text)
        return start, self.pos

    def para(self, sentences: list[str], tag: str = "p", attrs: str = "") -> tuple[Span,
                                                                                     list[Span]]:
        """A paragraph of sentences joined by single spaces; returns its span and theirs."""
        start = self.pos + (1 if self.blocks else 0)
        spans, offset = [], start
        for s in sentences:
            spans.append((offset, offset + len(s)))
            offset += len(s) + 1
        span = self.el(tag, " ".join(sentences), attrs)
        assert span[0] == start
        return span, spans

    @property
    def text(self) -> str:
        return "\n".join(self.blocks)

    @property
    def markup(self) -> str:
        return "".join(self.parts)


# --------------------------------------------------------------------------- web pages
def _fact_sentence(seed: int, src: WebSource, metric: int, version: int, variant: int) -> str:
    f = fact(seed, src.topic, metric)
    spec = f.spec
    value = src.stated_value(f, version)
    template = spec.page[variant % len(spec.page)]
    subject = topic_subject(src.topic)
    text = template.format(s=subject, S=cap(subject), v=vocab.format_value(spec.unit, value),
                           c=f.cond, year=src.published.year - 1 if src.published.month < 4
                           else src.published.year, site=src.site_name)
    return cap(text)


def _fill(template: str, subject: str, site: str) -> str:
    return cap(template.format(s=subject, S=cap(subject), site=site))


@lru_cache(maxsize=64)
def _site_css(host: str) -> str:
    """A site's stylesheet: static per site, as real sites serve the same CSS on every page."""
    rng = rng_for(0, "css", host)
    colour = f"#{rng.randrange(0x1000000):06x}"
    accent = f"#{rng.randrange(0x1000000):06x}"
    rules = [
        f":root{{--brand:{colour};--accent:{accent};--max:{rng.randint(62, 80)}rem}}",
        "*{box-sizing:border-box}body{margin:0;font:17px/1.6 Georgia,serif;color:#1d1d1f}",
        ".site-header{display:flex;gap:1rem;align-items:center;padding:.75rem 1.5rem;"
        "border-bottom:3px solid var(--brand)}",
        ".site-header nav a{margin-right:1rem;color:#333;text-decoration:none}",
        "main{max-width:var(--max);margin:0 auto;padding:1rem 1.5rem}",
        "article h1{font-size:2.1rem;line-height:1.2}.byline{color:#666;font-size:.9rem}",
        ".disclosure{background:#fff8e1;padding:.5rem 1rem;border-left:4px solid var(--accent)}",
        "aside.related li{margin:.25rem 0}footer{padding:2rem 1.5rem;color:#555;"
        "font-size:.85rem;border-top:1px solid #ddd}",
    ]
    for i in range(rng.randint(20, 45)):
        rules.append(f".u-{i}-{rng.randrange(1 << 20):x}{{margin:{rng.randint(0, 24)}px "
                     f"{rng.randint(0, 24)}px;padding:{rng.randint(0, 12)}px}}")
    return "".join(rules)


def _nav(src: WebSource) -> list[tuple[str, str]]:
    if src.source_type == "forum":
        return [("/", "Forums"), ("/latest", "Latest"), ("/top", "Top"), ("/login", "Log in")]
    if src.source_type == "scholarly":
        return [("/", "Journal home"), ("/issues", "Issues"), ("/authors", "For authors")]
    if src.source_type == "vendor":
        return [("/", "Home"), ("/products", "Products"), ("/support", "Support"),
                ("/cart", "Cart")]
    section = topic_domain(src.topic).replace("_", " ").title()
    return [("/", "Home"), (f"/{topic_domain(src.topic)}/", section), ("/latest", "Latest"),
            ("/newsletter", "Newsletter")]


def _web_build(world: World, src: WebSource, version: int, want_html: bool
               ) -> tuple[PageText, str]:
    """Build page text (and optionally HTML) of a web source in a version."""
    seed = world.seed
    rng = rng_for(seed, "page", src.g)
    subject = topic_subject(src.topic)
    domain = topic_domain(src.topic)
    b = _Builder(want_html)
    facts: dict[int, tuple[Span, Span]] = {}
    sentences: list[Span] = []
    opinion: Span | None = None
    relationship: Span | None = None

    # body sentences: facts, fillers and (for reviews, vendors, forums) a verdict
    items: list[tuple[str, int | str]] = [("fact", m) for m in src.facts]
    fillers = list(vocab.FILLER[domain])
    rng.shuffle(fillers)
    items += [("filler", t) for t in fillers[: rng.randint(3, 7)]]
    if src.source_type in ("web_page", "vendor", "forum"):
        items.append(("opinion", ""))
    rng.shuffle(items)
    variants = {m: rng.randrange(6) for m in src.facts}
    paragraphs: list[list[tuple[str, int | str]]] = []
    while items:
        n = rng.randint(2, 4)
        paragraphs.append(items[:n])
        items = items[n:]
    rel_text = vocab.RELATIONSHIP_SENTENCES[src.role].format(site=src.site_name)
    # "related" links point at the site's guides on neighbouring subjects (not captured: real
    # pages link to far more than any crawl archives)
    related = rng.sample([o for o in vocab.SUBJECTS[domain] if o != subject], 3)
    build_id = stable_hex(seed, "build", src.host, n=20)

    title = src.title
    if want_html:
        blob = base64.b64encode(rng_for(seed, "blob", src.g).randbytes(src.blob_bytes)).decode()
        ld_type = {"news": "NewsArticle", "scholarly": "ScholarlyArticle",
                   "forum": "DiscussionForumPosting", "vendor": "Product"}
        ld = {"@context": "https://schema.org", "@type": ld_type.get(src.source_type, "Article"),
              "headline": title, "author": {"@type": "Person", "name": src.author},
              "datePublished": src.published.isoformat(), "publisher": src.site_name}
        state = {"build": build_id, "flags": {"ab": src.g % 4, "consent": True},
                 "thumb": f"data:image/webp;base64,{blob}"}
        b.raw(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
            f"<meta charset=\"{src.charset}\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{html.escape(title)} | {html.escape(src.site_name)}</title>\n"
            f"<link rel=\"canonical\" href=\"{html.escape(src.final_url)}\">\n"
            f"<meta property=\"og:title\" content=\"{html.escape(title)}\">\n"
            f"<style>{_site_css(src.host)}</style>\n"
            f"<script type=\"application/ld+json\">{json.dumps(ld, sort_keys=True)}</script>\n"
            f"<script>window.__APP_STATE__={json.dumps(state, sort_keys=True)};</script>\n"
            "</head>\n"
            f"<body class=\"{src.source_type}\">\n<header class=\"site-header\">\n"
        )
    b.el("a", src.site_name, ' class="logo" href="/"')
    b.raw("<nav>\n")
    for href, label in _nav(src):
        b.el("a", label, f' href="{href}"')
    b.raw("</nav>\n</header>\n<main>\n<article>\n")
    b.el("h1", title)
    if src.source_type == "forum":
        b.el("p", f"Started by {src.author.split()[0].lower()}_{src.g % 9000 + 1000} on "
                  f"{src.published:%B %d, %Y}", ' class="byline"')
    elif src.source_type == "scholarly":
        stitle, authors, year, venue, doi = src.scholarly or (title, (src.author,), 2025, "", "")
        b.el("p", ", ".join(authors), ' class="authors"')
        b.el("p", f"{venue} ({year})" + (f" · https://doi.org/{doi}" if doi else ""),
             ' class="citation"')
        b.el("h2", "Abstract")
    else:
        b.el("p", f"By {src.author} | Updated {src.published:%B %d, %Y}", ' class="byline"')
    if src.role in ("affiliate", "sponsored"):
        relationship = b.el("p", rel_text, ' class="disclosure"')
    if want_html:
        b.raw(f"<img src=\"/media/{build_id[:8]}/{src.g}.webp\" alt=\"\" width=\"960\" "
              "height=\"540\" loading=\"lazy\">\n")
    for i, para in enumerate(paragraphs):
        sents: list[str] = []
        kinds: list[tuple[str, int | str]] = []
        for kind, payload in para:
            if kind == "fact":
                metric = int(payload)
                if not src.has_fact(metric, version):
                    continue
                sents.append(_fact_sentence(seed, src, metric, version, variants[metric]))
            elif kind == "filler":
                sents.append(_fill(str(payload), subject, src.site_name))
            else:
                sents.append(_fill(vocab.OPINIONS[domain][0], subject, src.site_name))
            kinds.append((kind, payload))
        if not sents:
            continue
        if src.source_type == "forum" and i > 0:
            b.el("p", f"Reply from member_{(src.g * 31 + i) % 9000 + 1000}", ' class="post-meta"')
        pspan, sspans = b.para(sents)
        for (kind, payload), sspan in zip(kinds, sspans, strict=True):
            sentences.append(sspan)
            if kind == "fact":
                facts[int(payload)] = (sspan, pspan)
            elif kind == "opinion":
                opinion = sspan
    b.raw("</article>\n<aside class=\"related\">\n")
    b.el("h2", "Related")
    b.raw("<ul>\n")
    for other in related:
        b.raw("<li>")
        b.el("a", f"{cap(other)}: what to know", f' href="/guides/{slugify(other)}"')
        b.raw("</li>\n")
    b.raw("</ul>\n")
    b.raw("</aside>\n</main>\n<footer>\n")
    if relationship is None:
        relationship = b.el("p", rel_text)
    b.el("p", f"© 2026 {src.site_name}. Synthetic demonstration page generated by citeaudit; "
              "figures are not real.")
    b.raw(f"</footer>\n<script src=\"/static/js/app.{build_id[:10]}.js\" defer></script>\n"
          "</body>\n</html>\n")
    page = PageText(b.text, facts, tuple(sentences), opinion, relationship)
    return page, b.markup


def web_page_text(world: World, src: WebSource, version: int) -> PageText:
    """Text model of a web source in a version (cached: answers quote popular pages often)."""
    return _web_text(world, src.g, version)


@lru_cache(maxsize=8192)
def _web_text(world: World, g: int, version: int) -> PageText:
    return _web_build(world, web_source(world, g), version, False)[0]


def web_page_html(world: World, src: WebSource, version: int) -> bytes:
    """The archived HTML body of a web source in a version, encoded in its charset."""
    markup = _web_build(world, src, version, True)[1]
    return markup.encode(src.charset, errors="xmlcharrefreplace")


# --------------------------------------------------------------------------- KB documents
def _kb_build(world: World, doc: KbDoc, version: int, want_html: bool
              ) -> tuple[PageText, str]:
    seed = world.seed
    rng = rng_for(seed, "kbpage", doc.k)
    subject = topic_subject(doc.topic)
    domain = topic_domain(doc.topic)
    b = _Builder(want_html)
    facts: dict[int, tuple[Span, Span]] = {}
    sentences: list[Span] = []
    chunks: list[Span] = []
    b.raw("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          f"<title>{html.escape(doc.title)}</title>\n"
          "<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:auto}"
          "section{border-top:1px solid #ccc}</style>\n</head>\n<body>\n<main>\n")
    b.el("h1", doc.title)
    b.el("p", f"Document {doc.doc_id} · Owner: Knowledge Operations · Internal use only",
         ' class="meta"')
    fillers = vocab.FILLER[domain]
    for i, metrics in enumerate(doc.chunks):
        changed = version == 1 and i == doc.change_chunk
        sents: list[str] = []
        kinds: list[int] = []
        for m in metrics:
            f = fact(seed, doc.topic, m)
            value = f.alt_value if changed else f.value
            spec = f.spec
            sents.append(cap(spec.page[rng.randrange(len(spec.page))].format(
                s=subject, S=cap(subject), v=vocab.format_value(spec.unit, value), c=f.cond,
                year=2025, site="the knowledge base")))
            kinds.append(m)
        for template in rng.sample(fillers, rng.randint(1, 3) if metrics else rng.randint(2, 4)):
            sents.append(_fill(template, subject, "the knowledge base"))
            kinds.append(-1)
        if changed:
            sents.append("This section was revised after a policy review.")
            kinds.append(-1)
        b.raw(f"<section id=\"{doc.chunk_id(i)}\">\n")
        b.el("h2", f"Section {i + 1}")
        pspan, sspans = b.para(sents)
        b.raw("</section>\n")
        chunks.append(pspan)
        for m, sspan in zip(kinds, sspans, strict=True):
            sentences.append(sspan)
            if m >= 0:
                facts.setdefault(m, (sspan, pspan))
    b.raw("</main>\n</body>\n</html>\n")
    return PageText(b.text, facts, tuple(sentences), None, None, tuple(chunks)), b.markup


def kb_page_text(world: World, doc: KbDoc, version: int) -> PageText:
    """Text model of a knowledge-base document in a version."""
    return _kb_text(world, doc.k, version)


@lru_cache(maxsize=4096)
def _kb_text(world: World, k: int, version: int) -> PageText:
    return _kb_build(world, kb_doc(world, k), version, False)[0]


def kb_page_html(world: World, doc: KbDoc, version: int) -> bytes:
    """The archived HTML of a knowledge-base document in a version."""
    return _kb_build(world, doc, version, True)[1].encode("utf-8")


# --------------------------------------------------------------------------- extraction
class _TextExtractor(HTMLParser):
    SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.skip = 0
        self.buf: list[str] = []
        self.out: list[str] = []

    def _flush(self) -> None:
        if self.buf:
            text = "".join(self.buf).strip()
            self.buf = []
            if text:
                self.out.append(text)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self._flush()
        if tag in self.SKIP:
            self.skip += 1

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        self._flush()

    def handle_endtag(self, tag: str) -> None:
        self._flush()
        if tag in self.SKIP and self.skip:
            self.skip -= 1

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.buf.append(data)


def extract_text(markup: str) -> str:
    """Reference extractor for the page-text convention every corpus offset refers to."""
    parser = _TextExtractor()
    parser.feed(markup)
    parser.close()
    parser._flush()
    return "\n".join(parser.out)
