"""Soft-404s: a cited page answered 2xx that is a "not found" page in disguise.

Many servers answer a missing page with 200 (a "not found" template, the search page, the home
page). When the crawler captures a host it also fetches one random never-existing path there
(the *probe*, :mod:`citeaudit.archive.capture.crawl`: same robots and delay rules, its own
WARC records, a metadata record naming it a probe, ``fetch_log`` rows with purpose ``probe``),
so the cited page can be compared with what this server says about a page that cannot exist.

Evidence, strongest first (:func:`judge`); only *strong* evidence makes L1 ``dead`` with reason
``soft_404`` (``soft_404_evidence`` says which); a weaker one is ``soft_404_flag``, not a verdict:

- ``redirect_to_root``: a deep cited URL redirected to the site's root (``/``, ``/index.html``):
  the site has nothing at the cited path;
- ``probe_same_final_url``: the cited URL and the probe both redirected to one and the same
  non-root page (``/404.html``, ``/search``);
- ``probe_match``: the probe answered 2xx and the cited page's text is the probe's (lines
  compared after masking the requested paths and digits: similarity ≥ 0.9 and at most
  ``MAX_ONLY_CHARS`` characters of either page not in the other);
- ``probe_message``: the cited page shows the server's own not-found message, as the probe
  page shows it ("Sorry, we couldn't find that page."), while another page of the same site
  does not (so the line is the message, not a search box of the site's template);
- ``not_found_content``: the page's title or first heading *is* a not-found phrase on a short
  page (:mod:`citeaudit.alignment.page_signals`) — the only evidence for supplied WARCs, which
  have no probe.

A cited URL at the root of its site is never judged by a probe or a redirect (the home page is
what a probe redirected to the root would show). Weak flags: ``probe_similar`` (line similarity
≥ 0.6 with a 2xx probe), ``not_found_words`` (a not-found phrase inside a title or heading).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pyarrow as pa

from citeaudit.archive.capture import origin_of

EVIDENCE = ("redirect_to_root", "probe_same_final_url", "probe_match", "probe_message",
            "not_found_content")
FLAGS = ("probe_similar", "not_found_words")

_ROOT_FILES = {"", "index", "index.html", "index.htm", "index.php", "index.asp", "index.aspx",
               "default.aspx", "default.asp", "default.htm", "default.html", "home",
               "home.html", "home.htm", "start", "main"}
_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")

MAX_ONLY_CHARS = 40
"""``probe_match`` needs the cited page and the probe to differ by at most this many characters
(normalized lines) each way: a soft-404 is the probe's page again, while even a short real page
in a heavy template brings its own sentences (and a probe page listing that very article among
"popular articles" brings others)."""

PAGE_CHECKS_SCHEMA = pa.schema([
    pa.field("citation_id", pa.string()),
    pa.field("soft_404_evidence", pa.string()),
    pa.field("soft_404_flag", pa.string()),
    pa.field("probe_url", pa.string()),
    pa.field("probe_status", pa.int32()),
    pa.field("wall", pa.string()),
])


@dataclass(frozen=True)
class Probe:
    """What a host answered for a path that cannot exist: the final URL and status after its
    redirects, and the final page's text (None when it has none)."""

    origin: str
    url: str
    final_url: str
    final_status: int | None
    text: str | None
    requested_at: dt.datetime | None = None


@dataclass(frozen=True)
class Judgement:
    evidence: str | None = None
    flag: str | None = None


def is_root(url: str | None) -> bool:
    """True for a site's root or its index page (``/``, ``/index.html``, ``/en/``)."""
    if not url:
        return False
    try:
        path = urlsplit(url.strip()).path
    except ValueError:
        return False
    segs = [s for s in unquote(path).lower().split("/") if s]
    if not segs:
        return True
    return len(segs) == 1 and (segs[0] in _ROOT_FILES
                               or re.fullmatch(r"[a-z]{2}(-[a-z]{2})?", segs[0]) is not None)


def _same_url(a: str | None, b: str | None) -> bool:
    if not a or not b:
        return False
    pa_, pb = urlsplit(a.strip()), urlsplit(b.strip())
    return (origin_of(a) == origin_of(b) and pa_.path.rstrip("/") == pb.path.rstrip("/")
            and pa_.query == pb.query)


def _lines(text: str, paths: Iterable[str]) -> dict[str, int]:
    """The normalized lines of a page text with their character weight: lower case, blanks
    collapsed, the requested paths masked (soft-404 pages echo them), digits masked."""
    out: dict[str, int] = {}
    masks = sorted({p for p in paths if p and len(p) > 1}, key=len, reverse=True)
    for line in text.split("\n"):
        s = _SPACE.sub(" ", line.strip().lower())
        for m in masks:
            s = s.replace(m, "<path>")
        s = _DIGITS.sub("0", s)
        if s:
            out[s] = out.get(s, 0) + len(s)
    return out


def similarity(page: str, probe: str, paths: Iterable[str] = ()) -> tuple[float, int]:
    """(character-weighted line similarity 0..1, characters that only one of the two pages
    has: the larger of page-only and probe-only)."""
    paths = list(paths)
    a, b = _lines(page, paths), _lines(probe, paths)
    if not a and not b:
        return 1.0, 0
    shared = sum(min(a[k], b[k]) for k in a.keys() & b.keys())
    total = sum(a.values()) + sum(b.values()) - shared
    page_only = sum(v for k, v in a.items() if k not in b)
    probe_only = sum(v for k, v in b.items() if k not in a)
    return (shared / total if total else 1.0), max(page_only, probe_only)


def _path_variants(url: str | None) -> list[str]:
    if not url:
        return []
    try:
        p = urlsplit(url)
    except ValueError:
        return []
    path = p.path or "/"
    out = [path.lower(), unquote(path).lower()]
    segs = [s for s in unquote(path).lower().split("/") if s]
    if segs:
        out.append(segs[-1])
        # pages that echo the path as words ("results for news 2019 gone story")
        words = " ".join(segs)
        for sep in "-_+.":
            words = words.replace(sep, " ")
        out += [words, segs[-1].replace("-", " ").replace("_", " ")]
    return out


def message_lines(probe_text: str, page_text: str, others: Iterable[str],
                  paths: Iterable[str], title: str | None = None) -> list[str]:
    """The server's not-found message lines (lines of its probe page saying a page is missing)
    that the cited page shows too and that at least one *other* page of the site does not show
    (so they are the message, not a search box in the site's template). A line inside the
    cited page's own ``<title>`` is its headline, not a message (an article about HTTP errors
    that the probe page lists among popular articles)."""
    from citeaudit.alignment.page_signals import is_not_found_sentence

    paths = list(paths)
    probe = _lines(probe_text, paths)
    page = _lines(page_text, paths)
    own = next(iter(_lines(title, paths)), "") if title else ""
    shared = [ln for ln in probe if ln in page and is_not_found_sentence(ln)
              and ln not in own]
    if not shared:
        return []
    other_sets = [_lines(o, paths) for o in others]
    return [ln for ln in shared if any(ln not in o for o in other_sets)]


def judge(cited_url: str | None, final_url: str | None, final_status: int | None,
          hops: int | None, text: str | None, not_found_signal: str | None,
          probe: Probe | None, others: Iterable[str] = (), title: str | None = None
          ) -> Judgement:
    """The soft-404 evidence for one cited page (see the module docstring); ``others``: the
    texts of other pages of the same site, ``title`` the page's ``<title>`` (for
    ``probe_message``)."""
    if final_status is None or not 200 <= final_status <= 299:
        return Judgement()
    flag = "not_found_words" if not_found_signal == "weak" else None
    root = is_root(cited_url)
    if not root and (hops or 0) > 0 and is_root(final_url):
        return Judgement("redirect_to_root")
    if not root and probe is not None and probe.final_status is not None \
            and 200 <= probe.final_status <= 299:
        if (hops or 0) > 0 and not is_root(probe.final_url) and probe.final_url != probe.url \
                and _same_url(final_url, probe.final_url):
            return Judgement("probe_same_final_url")
        if text is not None and probe.text is not None:
            paths = _path_variants(cited_url) + _path_variants(probe.url)
            sim, only = similarity(text, probe.text, paths)
            if sim >= 0.9 and only <= MAX_ONLY_CHARS:
                return Judgement("probe_match")
            if message_lines(probe.text, text, others, paths, title):
                return Judgement("probe_message")
            if sim >= 0.6:
                flag = "probe_similar"
    if not_found_signal == "strong":
        return Judgement("not_found_content")
    return Judgement(None, flag)


def probes_from_log(log: pa.Table, raw: Path) -> dict[str, list[Probe]]:
    """The probes of a crawl log (rows with purpose ``probe``), per origin, each with its final
    page's text read from the WARC."""
    from citeaudit import storage
    from citeaudit.alignment.payload_text import extract_one

    chains: dict[str, list[dict]] = {}
    for r in log.to_pylist():
        if r["purpose"] == "probe" and r["cited_url"]:  # cited_url: the probe's own URL
            chains.setdefault(r["cited_url"], []).append(r)
    out: dict[str, list[Probe]] = {}
    for rows in chains.values():
        rows.sort(key=lambda r: (r["requested_at"] or dt.datetime.min.replace(tzinfo=dt.UTC),
                                 r["hop"] or 0, r["attempt"] or 0))
        first = rows[0]
        last = [r for r in rows if r["record_type"] == "response"]
        if not last:
            continue
        fin = last[-1]
        text = None
        if fin["warc_file"] and fin["http_status"] and 200 <= fin["http_status"] <= 299:
            row = extract_one(storage.path(raw) / fin["warc_file"], int(fin["warc_offset"]))
            text = row["text"]
        origin = origin_of(first["cited_url"])
        if origin is None:
            continue
        out.setdefault(origin, []).append(Probe(
            origin, first["cited_url"], fin["url"], fin["http_status"], text,
            first["requested_at"]))
    return out


def nearest_probe(probes: dict[str, list[Probe]], url: str | None,
                  when: dt.datetime | None) -> Probe | None:
    """The probe of ``url``'s origin taken nearest ``when``."""
    cands = probes.get(origin_of(url) or "", [])
    if not cands:
        return None
    if when is None:
        return cands[0]
    return min(cands, key=lambda p: abs((p.requested_at or when) - when))


def page_checks(aligned: pa.Table, texts: pa.Table, probes: dict[str, list[Probe]]
                ) -> pa.Table:
    """Per citation: the soft-404 evidence and flag, the probe compared with, and the wall
    found on the final page (``PAGE_CHECKS_SCHEMA``)."""
    by_payload = {r["payload_sha256"]: r for r in texts.select(
        ["payload_sha256", "text", "not_found_signal", "wall", "title"]).to_pylist()}
    cites = aligned.select(["citation_id", "url", "final_uri", "final_status", "hops",
                            "payload_sha256", "resolution_issue",
                            "final_capture_time"]).to_pylist()
    # the distinct 2xx page texts of each site, for probe_message's "another page" test
    site_texts: dict[str, dict[str, str]] = {}
    for c in cites:
        t = by_payload.get(c["payload_sha256"]) if c["resolution_issue"] is None else None
        if t is not None and t["text"] and c["final_status"] and 200 <= c["final_status"] < 300:
            site_texts.setdefault(origin_of(c["url"]) or "", {})[c["payload_sha256"]] = t["text"]
    rows = []
    for c in cites:
        t = by_payload.get(c["payload_sha256"]) if c["resolution_issue"] is None else None
        probe = nearest_probe(probes, c["url"], c["final_capture_time"])
        j = Judgement()
        if t is not None and not t["wall"]:
            others = [v for k, v in site_texts.get(origin_of(c["url"]) or "", {}).items()
                      if k != c["payload_sha256"]]
            j = judge(c["url"], c["final_uri"], c["final_status"], c["hops"], t["text"],
                      t["not_found_signal"], probe, others, t["title"])
        rows.append({"citation_id": c["citation_id"], "soft_404_evidence": j.evidence,
                     "soft_404_flag": j.flag, "probe_url": probe.url if probe else None,
                     "probe_status": probe.final_status if probe else None,
                     "wall": t["wall"] if t is not None else None})
    return pa.Table.from_pylist(rows, PAGE_CHECKS_SCHEMA)
