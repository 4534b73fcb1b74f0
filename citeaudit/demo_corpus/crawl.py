"""The crawl plan: which URL is fetched on which crawl day, what it answers, and when.

Pure functions of the world, the source and the days it was cited. The WARC writer replays
them to write records, and the annotation generator asks them whether an annotator could have
opened the archived page. Crawl index ``c`` runs over :attr:`Params.crawl_dates`: 0 is the day
before the first observation day, ``1..days`` are observation days (answers of observation day
``d`` are archived by crawl ``d + 1``), ``days + 1`` is the day after.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, time, timedelta

from citeaudit.demo_corpus.world import KbDoc, WebSource, World, rng_for

P_BEFORE = 0.35  # share of cited pages already captured by the routine crawl the day before
P_RECRAWL = 0.15  # share re-fetched on a later observation day although not cited again
P_AFTER = 0.5  # share re-fetched by the follow-up crawl the day after


@dataclass(frozen=True)
class Fetch:
    """One HTTP exchange the crawler records (a request and a response or revisit)."""

    url: str
    status: int
    location: str | None
    version: int
    when: datetime
    hop: int
    retry: int


def crawl_day_start(world: World, c: int) -> datetime:
    """Midnight UTC of crawl day ``c``."""
    return datetime.combine(world.start - timedelta(days=1) + timedelta(days=c), time())


def capture_time(world: World, kind: str, index: int, c: int) -> datetime:
    """When crawl ``c`` fetches a source: spread over the day in pool order, plus jitter.

    Web pages are fetched between 00:30 and 20:30 in pool order (so a WARC file is roughly
    chronological); knowledge-base exports run from 21:00.
    """
    rng = rng_for(world.seed, "when", kind, index, c)
    base = crawl_day_start(world, c)
    if kind == "web":
        offset = 1800 + int(index * 72000 / max(1, world.scale.n_web))
    else:
        offset = 75600 + int(index * 7200 / max(1, world.scale.n_kb))
    return base + timedelta(seconds=offset + rng.randint(0, 59))


def participates(world: World, kind: str, index: int, c: int, cited: Sequence[bool],
                 never: bool = False) -> bool:
    """Does crawl ``c`` fetch this source, given the observation days it was cited on?"""
    if never or not any(cited):
        return False
    days = world.days
    if 1 <= c <= days and cited[c - 1]:
        return True
    rng = rng_for(world.seed, "visit", kind, index, c)
    if c == 0:
        return rng.random() < P_BEFORE
    if c == days + 1:
        return rng.random() < P_AFTER
    return any(cited[: c - 1]) and rng.random() < P_RECRAWL


def server_error(world: World, src: WebSource) -> tuple[int, bool]:
    """For a ``server_error`` page: the crawl that got a 500, and whether it retried."""
    rng = rng_for(world.seed, "5xx", src.g)
    return rng.randint(1, world.days), rng.random() < 0.45


def web_fetches(world: World, src: WebSource, c: int) -> list[Fetch]:
    """Every exchange a capture of ``src`` on crawl ``c`` records, redirects followed."""
    if src.plan == "never_captured":
        return []
    t0 = capture_time(world, "web", src.g, c)
    version = src.version_at(c)
    if src.plan == "loop":
        a, b = src.chain[0][0], src.chain[1][0]
        return [Fetch(a, 302, b, 0, t0, 0, 0), Fetch(b, 302, a, 0, t0 + timedelta(seconds=1), 1, 0)]
    out: list[Fetch] = []
    hop = 0
    if src.chain:
        for (url, status), (nxt, _) in zip(src.chain, src.chain[1:], strict=False):
            out.append(Fetch(url, status, nxt, 0, t0 + timedelta(seconds=hop), hop, 0))
            hop += 1
    final = src.final_url
    when = t0 + timedelta(seconds=hop)
    if c >= src.die_crawl:
        out.append(Fetch(final, src.dead_status, None, version, when, hop, 0))
    elif src.plan == "server_error":
        err_crawl, retry = server_error(world, src)
        if c == err_crawl:
            out.append(Fetch(final, 500, None, version, when, hop, 0))
            if retry:
                out.append(Fetch(final, 200, None, version, when + timedelta(minutes=40), hop, 1))
        else:
            out.append(Fetch(final, 200, None, version, when, hop, 0))
    else:
        out.append(Fetch(final, 200, None, version, when, hop, 0))
    return out


def archived_ok(world: World, src: WebSource, c: int) -> bool:
    """Would an annotator find a readable 200 capture of the page from crawl ``c``?"""
    return any(f.status == 200 for f in web_fetches(world, src, c))


def kb_fetches(world: World, doc: KbDoc, c: int) -> list[Fetch]:
    """The knowledge-base export of one document on crawl ``c`` (always a 200)."""
    return [Fetch(doc.url, 200, None, doc.version_at(c), capture_time(world, "kb", doc.k, c), 0, 0)]
