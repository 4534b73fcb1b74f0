"""The synthetic world behind the demo corpus: query panel, topics, facts, web sources, KB docs.

Every object is a pure function of ``(seed, kind, index)``: a web source, a knowledge-base
document or a fact can be rebuilt at any time from its index alone. That is what lets the
generator stream: the answers phase only remembers *which* sources were cited on which days (one
byte per source), and the crawl phase regenerates each page when it writes its capture.

Randomness comes from :func:`rng_for`, a ``random.Random`` seeded with a string built from the
seed and the object's identity, so results never depend on generation order, hash
randomisation or the wall clock.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from functools import lru_cache
from pathlib import Path

from citeaudit.demo_corpus import vocab

SUBJECTS_PER_DOMAIN = 20
N_TOPICS = len(vocab.DOMAINS) * SUBJECTS_PER_DOMAIN
WEB_TYPES = ("web_page", "news", "scholarly", "forum", "vendor")
DOMAIN_WEIGHTS = (0.22, 0.18, 0.14, 0.18, 0.14, 0.14)

# Inclusion probability of a query in the panel, per (domain, risk band): the panel
# over-samples high-risk strata, so analyses must weight by 1 / inclusion_prob.
INCLUSION_PROB: dict[tuple[str, str], float] = {
    ("health", "high"): 1.0, ("health", "medium"): 0.6, ("health", "low"): 0.25,
    ("finance", "high"): 0.9, ("finance", "medium"): 0.5, ("finance", "low"): 0.2,
    ("legal", "high"): 0.9, ("legal", "medium"): 0.45, ("legal", "low"): 0.2,
    ("consumer_products", "high"): 0.5, ("consumer_products", "medium"): 0.2,
    ("consumer_products", "low"): 0.08,
    ("technology", "high"): 0.5, ("technology", "medium"): 0.25, ("technology", "low"): 0.1,
    ("news", "high"): 0.6, ("news", "medium"): 0.3, ("news", "low"): 0.12,
}
RISK_WEIGHTS: dict[str, tuple[float, float, float]] = {
    # weights for (high, medium, low)
    "health": (0.6, 0.3, 0.1), "finance": (0.5, 0.35, 0.15), "legal": (0.55, 0.35, 0.1),
    "consumer_products": (0.05, 0.35, 0.6), "technology": (0.1, 0.35, 0.55),
    "news": (0.15, 0.45, 0.4),
}
RISK_BANDS = ("high", "medium", "low")


def rng_for(seed: int, *parts: object) -> random.Random:
    """A generator private to one object: same (seed, parts) → same stream, in any order."""
    return random.Random("|".join([str(seed), *map(str, parts)]))


def stable_hex(seed: int, *parts: object, n: int = 12) -> str:
    """A short hex identifier derived from the seed and the object's identity."""
    key = "|".join([str(seed), *map(str, parts)]).encode()
    return hashlib.sha256(key).hexdigest()[:n]


def stable_uuid(seed: int, *parts: object) -> str:
    """A version-4-shaped UUID derived (not drawn) from the seed, for WARC-Record-IDs."""
    key = "|".join([str(seed), *map(str, parts)]).encode()
    raw = bytearray(hashlib.sha256(key).digest()[:16])
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(raw)))


def rfc3339(ts: datetime) -> str:
    """Format a naive UTC datetime as RFC 3339 with a ``Z`` suffix, second precision."""
    return ts.strftime("%Y-%m-%dT%H:%M:%SZ")


def cap(text: str) -> str:
    """Capitalise the first letter unless the first word is a brand such as ``iOS``."""
    if not text or not text[0].islower():
        return text
    rest = text.split(" ", 1)[0][1:]
    if rest != rest.lower():
        return text
    return text[0].upper() + text[1:]


def slugify(text: str) -> str:
    """A URL slug: ASCII lowercase words joined by hyphens."""
    ascii_text = text.encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")


@dataclass(frozen=True)
class Params:
    """What the user asked for; everything else is derived from these."""

    seed: int = 7
    answers: int = 600
    days: int = 3
    start_date: date = date(2026, 11, 1)

    @property
    def dates(self) -> list[date]:
        """Observation dates, one per day from ``start_date``."""
        return [self.start_date + timedelta(days=i) for i in range(self.days)]

    @property
    def crawl_dates(self) -> list[date]:
        """Crawl dates: the day before, every observation day, the day after."""
        first = self.start_date - timedelta(days=1)
        return [first + timedelta(days=i) for i in range(self.days + 2)]


@dataclass(frozen=True)
class Query:
    """One query of the daily panel."""

    query_id: str
    text: str
    topic: int
    domain: str
    subject: str
    risk_band: str
    inclusion_prob: float


@dataclass(frozen=True)
class Fact:
    """One metric of one topic: its true (canonical) value, a wrong one, and its qualifier."""

    topic: int
    metric: int
    value: float
    alt_value: float
    cond: str  # "" when the fact carries no qualifying clause

    @property
    def spec(self) -> vocab.Metric:
        return vocab.METRICS[topic_domain(self.topic)][self.metric]


def topic_domain(topic: int) -> str:
    """Domain of a topic index."""
    return vocab.DOMAINS[topic // SUBJECTS_PER_DOMAIN]


def topic_subject(topic: int) -> str:
    """Subject phrase of a topic index."""
    return vocab.SUBJECTS[topic_domain(topic)][topic % SUBJECTS_PER_DOMAIN]


def _draw_value(rng: random.Random, m: vocab.Metric) -> float:
    steps = int(round((m.hi - m.lo) / m.step))
    return round(m.lo + m.step * rng.randint(0, steps), 2)


@lru_cache(maxsize=4096)
def fact(seed: int, topic: int, metric: int) -> Fact:
    """The fact (topic, metric): canonical value, a clearly different alternative, qualifier."""
    m = vocab.METRICS[topic_domain(topic)][metric]
    rng = rng_for(seed, "fact", topic, metric)
    value = _draw_value(rng, m)
    alt = value
    for _ in range(50):
        alt = _draw_value(rng, m)
        if abs(alt - value) >= max(m.step, 0.1 * max(abs(value), m.step)):
            break
    if alt == value:
        alt = round(value + m.step * 3, 2)
    cond = m.conds[rng.randrange(len(m.conds))] if rng.random() < 0.55 else ""
    return Fact(topic, metric, value, alt, cond)


@dataclass(frozen=True)
class Scale:
    """Pool sizes derived from the number of answers, so reuse stays realistic at any scale."""

    web_per_topic: int
    kb_per_topic: int

    @classmethod
    def for_params(cls, p: Params) -> Scale:
        web = max(12, math.ceil(p.answers * 1.1 / N_TOPICS))
        kb = max(3, math.ceil(p.answers * 0.06 / N_TOPICS))
        return cls(web, kb)

    @property
    def n_web(self) -> int:
        return self.web_per_topic * N_TOPICS

    @property
    def n_kb(self) -> int:
        return self.kb_per_topic * N_TOPICS


# --------------------------------------------------------------------------- query panel
_KEYWORDS: dict[str, tuple[str, ...]] = {
    "health": ("health", "vaccin", "drug", "medic", "disease", "doctor", "diet", "food", "eat"),
    "finance": ("tax", "money", "econom", "wage", "price", "bank", "invest", "pay", "poverty"),
    "legal": ("law", "legal", "court", "right", "ban", "crime", "prison", "penalty", "illegal"),
    "technology": ("technolog", "internet", "robot", "computer", "online", "ai ", "software"),
    "consumer_products": ("buy", "product", "brand", "fashion", "car", "shop", "consumer"),
}


def classify_domain(text: str) -> str:
    """Assign an external query to a domain by keyword, ``news`` when nothing matches."""
    low = text.lower()
    for domain, words in _KEYWORDS.items():
        if any(w in low for w in words):
            return domain
    return "news"


def load_external_queries(path: Path) -> list[str]:
    """Query strings from a JSONL file whose lines carry ``query`` or ``prompt_text``."""
    out: list[str] = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            obj = json.loads(line)
            text = obj.get("query") or obj.get("prompt_text") or obj.get("question")
            if isinstance(text, str) and text.strip():
                out.append(" ".join(text.split()))
    if not out:
        raise ValueError(f"{path}: no query strings found (keys: query, prompt_text, question)")
    return out


@dataclass
class Panel:
    """The daily query panel: ``size`` queries, each asked to every engine every day."""

    seed: int
    size: int
    external: list[str] | None = field(default=None)

    def query(self, k: int) -> Query:
        """Query ``k`` of the panel (pure)."""
        rng = rng_for(self.seed, "query", k)
        if self.external:
            text = self.external[k % len(self.external)]
            domain = classify_domain(text)
            subject_idx = rng.randrange(SUBJECTS_PER_DOMAIN)
        else:
            domain = rng.choices(vocab.DOMAINS, weights=DOMAIN_WEIGHTS)[0]
            subject_idx = rng.randrange(SUBJECTS_PER_DOMAIN)
            template = rng.choice(vocab.QUERY_TEMPLATES[domain])
            text = cap(template.format(s=vocab.SUBJECTS[domain][subject_idx]))
        topic = vocab.DOMAINS.index(domain) * SUBJECTS_PER_DOMAIN + subject_idx
        band = rng.choices(RISK_BANDS, weights=RISK_WEIGHTS[domain])[0]
        return Query(
            query_id=f"q-{k:05d}",
            text=text,
            topic=topic,
            domain=domain,
            subject=topic_subject(topic),
            risk_band=band,
            inclusion_prob=INCLUSION_PROB[(domain, band)],
        )


# --------------------------------------------------------------------------- web sources
@dataclass(frozen=True, slots=True)
class WebSource:
    """One cited web page and everything the crawler will see when it fetches it.

    ``url`` is the URL answers cite (before any tracking parameters they append). When the
    page redirects, ``chain`` lists the hops ``(url, status)`` ending at the final URL; the
    final page is served at ``chain[-1][0]`` with status 200 unless the plan says otherwise.
    """

    g: int
    topic: int
    source_type: str
    host: str
    site_name: str
    role: str
    source_id: str
    url: str
    title: str
    author: str
    published: date
    facts: tuple[int, ...]
    discordant: frozenset[int]
    plan: str
    chain: tuple[tuple[str, int], ...]
    change_crawl: int  # crawl index from which version 1 is served (large = never)
    change_kind: str  # "", "edit" or "remove"
    change_metric: int
    die_crawl: int  # crawl index from which the page is gone (large = never)
    dead_status: int
    blob_bytes: int
    content_encoding: str  # "", "gzip"
    chunked: bool
    charset: str
    scholarly: tuple[str, tuple[str, ...], int, str, str] | None  # title, authors, year, venue, doi
    scholarly_defect: str

    @property
    def domain(self) -> str:
        return topic_domain(self.topic)

    @property
    def subject(self) -> str:
        return topic_subject(self.topic)

    @property
    def final_url(self) -> str:
        return self.chain[-1][0] if self.chain else self.url

    def version_at(self, crawl_idx: int) -> int:
        """Page version served at a crawl index (0 before the change, 1 after)."""
        return 1 if crawl_idx >= self.change_crawl else 0

    def has_fact(self, metric: int, version: int) -> bool:
        """Does the page, in this version, state the given metric?"""
        if metric not in self.facts:
            return False
        return not (version == 1 and self.change_kind == "remove" and metric == self.change_metric)

    def stated_value(self, f: Fact, version: int) -> float:
        """The value the page states for a fact in a version (may be wrong or edited)."""
        if version == 1 and self.change_kind == "edit" and f.metric == self.change_metric:
            return f.alt_value if f.metric not in self.discordant else f.value
        return f.alt_value if f.metric in self.discordant else f.value


PLAN_WEIGHTS: tuple[tuple[str, float], ...] = (
    ("ok", 0.800),
    ("redirect", 0.045),
    ("redirect2", 0.015),
    ("loop", 0.004),
    ("dead", 0.022),
    ("dies_later", 0.030),
    ("server_error", 0.016),
    ("changed", 0.045),
    ("never_captured", 0.023),
)
_PLANS = tuple(p for p, _ in PLAN_WEIGHTS)
_PLAN_W = tuple(w for _, w in PLAN_WEIGHTS)


def _sites_for(domain: str, source_type: str) -> tuple[tuple[str, str, str], ...]:
    if source_type == "news":
        return vocab.NEWS_SITES + vocab.SITES["news"]["web_page"] * (domain == "news")
    return vocab.SITES[domain][source_type]


def _title(rng: random.Random, source_type: str, subject: str) -> str:
    s = subject
    options = {
        "web_page": (f"{cap(s)}: a complete guide for 2026", f"Everything you need to know "
                     f"about {s}", f"{cap(s)} explained: costs, limits and what to watch"),
        "news": (f"What the latest figures say about {s}", f"Officials release new numbers on {s}",
                 f"{cap(s)}: key questions answered"),
        "forum": (f"Anyone have experience with {s}?", f"Real-world numbers for {s} (thread)",
                  f"Question about {s}"),
        "vendor": (f"{cap(s)} – product details and specifications", f"About {s}",
                   f"{cap(s)}: official information"),
        "scholarly": (f"Outcomes associated with {s}: a retrospective analysis",
                      f"A cross-sectional study of {s}", f"Measuring {s} in practice"),
    }[source_type]
    return rng.choice(options)


def _person(rng: random.Random) -> str:
    return f"{rng.choice(vocab.GIVEN_NAMES)} {rng.choice(vocab.FAMILY_NAMES)}"


@dataclass(frozen=True)
class World:
    """The hashable identity every pure builder is keyed on."""

    seed: int
    scale: Scale
    start: date
    days: int

    @classmethod
    def for_params(cls, p: Params) -> World:
        return cls(p.seed, Scale.for_params(p), p.start_date, p.days)


@lru_cache(maxsize=32768)
def web_source(world: World, g: int) -> WebSource:
    """Web source ``g`` of the pool (pure function of the world and ``g``)."""
    seed, scale, start, days = world.seed, world.scale, world.start, world.days
    topic = g // scale.web_per_topic
    domain = topic_domain(topic)
    subject = topic_subject(topic)
    rng = rng_for(seed, "web", g)
    source_type = rng.choices(WEB_TYPES, weights=(0.32, 0.20, 0.16, 0.14, 0.18))[0]
    host, site_name, role = rng.choice(_sites_for(domain, source_type))
    if source_type == "news" and rng.random() < 0.08:
        role = "sponsored"
    title = _title(rng, source_type, subject)
    author = _person(rng)
    published = start - timedelta(days=rng.randint(2, 700) if source_type != "news" else
                                  rng.randint(1, 60))
    # a bijection of g (7919 and the prime modulus are coprime): every source gets its own
    # URL, so no two sources ever share a capture
    page_id = 1_000_000 + (g * 7919 + seed) % 8_999_993
    slug = slugify(title)[:60].strip("-")
    if source_type == "news":
        path = f"/{published:%Y/%m/%d}/{slug}-{page_id}"
    elif source_type == "forum":
        path = f"/t/{slug}/{page_id}" if rng.random() < 0.6 else f"/thread?id={page_id}"
    elif source_type == "vendor":
        path = (f"/products/{slugify(subject)}-{page_id}" if rng.random() < 0.5
                else f"/products/{slugify(subject)}?sku={page_id}")
    elif source_type == "scholarly":
        path = f"/article/{published.year}/{page_id}"
    else:
        section = {"health": "conditions", "finance": "money", "legal": "guides",
                   "consumer_products": "reviews", "technology": "articles",
                   "news": "local"}[domain]
        path = f"/{section}/{slug}-{page_id}" if rng.random() < 0.7 else f"/{section}/{page_id}"
    url = f"https://{host}{path}"

    metrics = list(range(len(vocab.METRICS[domain])))
    rng.shuffle(metrics)
    facts = tuple(sorted(metrics[: rng.randint(4, 6)]))
    discordant = frozenset(m for m in facts if rng.random() < 0.07)

    plan = rng.choices(_PLANS, weights=_PLAN_W)[0]
    chain: tuple[tuple[str, int], ...] = ()
    big = 10**6
    change_crawl, change_kind, change_metric = big, "", -1
    die_crawl, dead_status = big, 404
    if plan == "redirect":
        kind = rng.random()
        if kind < 0.5:
            chain = ((url.replace("https://", "http://", 1), 301), (url, 200))
        else:
            old = f"https://{host}/p/{page_id}"
            chain = ((old, rng.choice((301, 302))), (url, 200))
        url = chain[0][0]
    elif plan == "redirect2":
        old = f"http://{host}/p/{page_id}"
        chain = ((old, 301), (old.replace("http://", "https://", 1), 302), (url, 200))
        url = old
    elif plan == "loop":
        a = f"https://{host}/go/{page_id}"
        chain = ((a, 302), (a + "?from=loop", 302), (a, 302))
        url = a
    elif plan == "dead":
        dead_status = rng.choice((404, 404, 410))
        die_crawl = 0
    elif plan == "dies_later":
        dead_status = rng.choice((404, 410))
        die_crawl = rng.randint(2, days + 1)
    elif plan == "changed":
        change_crawl = rng.randint(2, days + 1)
        change_kind = "edit" if rng.random() < 0.6 else "remove"
        change_metric = rng.choice(facts)

    scholarly = None
    scholarly_defect = ""
    if source_type == "scholarly":
        r = rng.random()
        if r < 0.45:
            doi, stitle, authors, year, venue = rng.choice(vocab.REAL_WORKS)
            d = rng.random()
            if d < 0.12:
                year, scholarly_defect = year + rng.choice((-3, 2, 4)), "year"
            elif d < 0.22:
                stitle, scholarly_defect = stitle.split(":")[0] + ": a follow-up study", "title"
            elif d < 0.30:
                authors = (_person(rng),) + authors[1:]
                scholarly_defect = "first_author"
        else:
            stitle = title
            authors = tuple(_person(rng) for _ in range(rng.randint(1, 4)))
            year = published.year
            venue = rng.choice(vocab.VENUES[domain])
            if r < 0.85:
                doi = f"{vocab.TEST_DOI_PREFIX}/{slugify(domain)[:4]}.{year}.{page_id}"
                scholarly_defect = "fabricated_doi"
            else:
                doi = ""
                scholarly_defect = "no_doi"
        scholarly = (stitle, tuple(authors), int(year), venue, doi)
        if doi.startswith(vocab.TEST_DOI_PREFIX) and plan == "ok" and rng.random() < 0.35:
            # cited through the DOI resolver, which answers 404 for an identifier it does not
            # know (real DOIs are shared by many sources here, so they are cited by landing page)
            plan, url, dead_status, die_crawl = "dead", f"https://doi.org/{doi}", 404, 0

    blob = int(rng.lognormvariate(math.log(22000), 0.5))
    encoding = "gzip" if rng.random() < 0.06 else ""
    chunked = (not encoding) and rng.random() < 0.02
    charset = "windows-1252" if host in vocab.LEGACY_CHARSET_HOSTS else "utf-8"
    source_id = "src-" + stable_hex(seed, "source", g, n=10)
    return WebSource(
        g=g, topic=topic, source_type=source_type, host=host, site_name=site_name, role=role,
        source_id=source_id, url=url, title=title, author=author, published=published,
        facts=facts, discordant=discordant, plan=plan, chain=chain,
        change_crawl=change_crawl, change_kind=change_kind, change_metric=change_metric,
        die_crawl=die_crawl, dead_status=dead_status, blob_bytes=blob,
        content_encoding=encoding, chunked=chunked, charset=charset,
        scholarly=scholarly, scholarly_defect=scholarly_defect,
    )


# --------------------------------------------------------------------------- KB documents
@dataclass(frozen=True, slots=True)
class KbDoc:
    """One document of the in-house RAG knowledge base, split into chunks.

    ``chunks`` lists, per chunk, the metrics whose fact sentence the chunk contains.
    """

    k: int
    topic: int
    doc_id: str
    title: str
    chunks: tuple[tuple[int, ...], ...]
    change_crawl: int
    change_chunk: int

    @property
    def url(self) -> str:
        return f"https://{vocab.KB_HOST}/docs/{self.doc_id}"

    def chunk_id(self, i: int) -> str:
        return f"{self.doc_id}_c{i:02d}"

    def version_at(self, crawl_idx: int) -> int:
        return 1 if crawl_idx >= self.change_crawl else 0


@lru_cache(maxsize=4096)
def kb_doc(world: World, k: int) -> KbDoc:
    """Knowledge-base document ``k`` (pure)."""
    seed, days = world.seed, world.days
    topic = k // world.scale.kb_per_topic
    rng = rng_for(seed, "kb", k)
    n_metrics = len(vocab.METRICS[topic_domain(topic)])
    n_chunks = rng.randint(5, 10)
    chunks = []
    for _ in range(n_chunks):
        r = rng.random()
        n = 0 if r < 0.25 else (1 if r < 0.8 else 2)
        chunks.append(tuple(sorted(rng.sample(range(n_metrics), n))))
    title_kind = rng.choice(("Policy handbook", "Reference guide", "FAQ", "Internal brief"))
    doc_id = f"DOC{k:05d}"
    change_crawl = rng.randint(2, days + 1) if rng.random() < 0.04 else 10**6
    return KbDoc(
        k=k, topic=topic, doc_id=doc_id,
        title=f"{title_kind}: {topic_subject(topic)}",
        chunks=tuple(chunks), change_crawl=change_crawl,
        change_chunk=rng.randrange(n_chunks),
    )
