"""What an archived page *is*, read from its own markup: a "not found" page answered with 200,
or a wall (cookie-consent interstitial, login wall, paywall, bot challenge) standing where the
cited content should be.

Why: a 200 is not existence. A wall is not the page (L1 ``unresolved``, L2 has no text to look
in: never ``pass``, never ``dead``, never "evidence not in page"); a "not found" page is a dead
link (L1 ``dead``, reason ``soft_404``) — but only when the evidence is strong, since a false
``dead`` is a negative finding. The rules are deliberately narrow; a weaker signal is a flag.

Content signals (no probe needed, so they also work for supplied WARCs):

- *not found*, strong: the ``<title>`` (or one of its `` | ``/`` - `` separated segments) and
  the first ``<h1>`` each *are* a not-found phrase (``Page not found``, ``404``, ``Error 404 -
  Not Found``, ``Seite nicht gefunden``, ``Page introuvable``, ``Página no encontrada``, ...)
  on a page of at most 400 words, or one of them is on a page of at most 150 words. An
  article *about* HTTP errors names them inside a longer
  title and has a long text: at most a weak signal (the phrase appears somewhere in title or
  headings).
- *walls*: bot challenges by their vendors' markers (Cloudflare, Incapsula, PerimeterX,
  DataDome, a bare CAPTCHA page); paywalls by schema.org ``isAccessibleForFree: false`` or
  visible subscribe-to-read markers on a short page; login walls by a password field on a short
  page that asks to sign in; consent interstitials by consent wording on a short page whose
  title or heading is about cookies/privacy/consent (a cookie banner above a full article is
  not a wall: the article's length says so).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from citeaudit.archive.capture import script_shell

WALLS = ("consent_wall", "login_wall", "paywall", "bot_challenge", "script_shell")
"""The wall kinds, as L1 reasons (``citation_existence.reason``). ``script_shell`` is no wall
the site put up but stands in the same place: a static capture of a page a script renders
(:func:`citeaudit.archive.capture.script_shell`), whose text holds none of its content until a
browser renders it (``fetch.browser``)."""

_NF_PHRASES = [
    r"(error\s*)?404(\s*error)?",
    r"(http\s*)?(error\s*)?(404|410)?\s*[-:–—]?\s*(page\s+|file\s+|document\s+|resource\s+)?"
    r"(was\s+|could\s+not\s+be\s+|cannot\s+be\s+|can'?t\s+be\s+)?not\s+(be\s+)?found",
    r"(sorry,?\s+)?(this|the)?\s*page\s+(does\s+not|doesn'?t)\s+exist",
    r"(oops!?\s*)?(sorry,?\s+)?(we\s+)?(couldn'?t|could\s+not|can'?t|cannot)\s+find\s+(that|this|"
    r"the)\s+page",
    r"page\s+(is\s+)?(missing|unavailable|gone)",
    r"(the\s+)?page\s+you\s+(are|were)\s+looking\s+for\s+(could\s+not\s+be\s+found|"
    r"(does\s+not|doesn'?t)\s+exist|is\s+(not\s+available|gone|missing))",
    r"(fehler\s*404|404\s*fehler|seite\s+nicht\s+gefunden|diese\s+seite\s+existiert\s+nicht)",
    r"(erreur\s*404|page\s+introuvable|page\s+non\s+trouv[ée]e|cette\s+page\s+n'existe\s+pas)",
    r"(error\s*404|p[áa]gina\s+no\s+encontrada|no\s+se\s+encontr[óo]\s+la\s+p[áa]gina|"
    r"p[áa]gina\s+n[ãa]o\s+encontrada)",
    r"(errore\s*404|pagina\s+non\s+trovata|pagina\s+niet\s+gevonden|sidan\s+hittades\s+inte|"
    r"strony\s+nie\s+znaleziono|nie\s+znaleziono\s+strony)",
    r"(страница\s+не\s+найдена|ошибка\s*404)",
    r"(ページが見つかりません|お探しのページは見つかりませんでした|找不到页面|页面不存在|页面未找到|"
    r"找不到網頁|페이지를\s*찾을\s*수\s*없습니다)",
]
_NF_FULL = re.compile(r"^\s*(" + "|".join(_NF_PHRASES) + r")\s*[.!]?\s*$", re.I)
_NF_ANY = re.compile(r"\b404\b|not\s+found|nicht\s+gefunden|introuvable|no\s+encontrada|"
                     r"non\s+trovata|не\s+найдена|見つかりません|找不到|页面不存在", re.I)
_NF_SENTENCE = re.compile(
    r"\b404\b|not\s+(be\s+)?found|(couldn'?t|could\s+not|can'?t|cannot|unable\s+to)\s+"
    r"(find|locate)|(does\s+not|doesn'?t|no\s+longer)\s+exists?|no\s+longer\s+available|"
    r"nicht\s+gefunden|existiert\s+(leider\s+)?nicht|introuvable|n'existe\s+pas|"
    r"no\s+encontr|non\s+trovata|niet\s+gevonden|не\s+найдена|見つかりません|"
    r"見つかりませんでした|找不到|不存在", re.I)
_TITLE_SEP = re.compile(r"\s+[|\-–—:·•»]\s+|\s*\|\s*")

_CHALLENGE = re.compile(
    r"cf-browser-verification|cf_chl_opt|/cdn-cgi/challenge-platform|cf-challenge|"
    r"_incapsula_resource|incapsula incident id|px-captcha|perimeterx|"
    r"captcha-delivery\.com|datadome|checking your browser before accessing|"
    r"verify (that )?you are (a )?human|are you a robot\??|"
    r"please enable (javascript and )?cookies to continue|ddos protection by", re.I)
_CHALLENGE_TITLE = re.compile(r"^\s*(just a moment\.*|attention required!? \| cloudflare|"
                              r"access denied|security check|human verification|"
                              r"are you a robot\??|captcha)\s*$", re.I)
_FREE_FALSE = re.compile(
    r"[\"']isAccessibleForFree[\"']\s*:\s*(false|[\"']false[\"'])|"
    r"itemprop=[\"']isAccessibleForFree[\"'][^>]*content=[\"']false[\"']|"
    r"content=[\"']false[\"'][^>]*itemprop=[\"']isAccessibleForFree[\"']", re.I)
_PAYWALL_TEXT = re.compile(
    r"subscribe (now )?to (continue|keep) reading|to continue reading,? (please )?"
    r"(subscribe|log in|sign in)|this (article|content|story) is (only )?(available )?"
    r"(for|to) (paying )?subscribers|subscribers only|already a subscriber\?|"
    r"create a free account to (continue|read)|you have reached your (free )?article limit|"
    r"you'?ve reached your (monthly )?limit of free articles", re.I)
_PASSWORD = re.compile(r"<input[^>]+type\s*=\s*[\"']?password", re.I)
_LOGIN_TEXT = re.compile(r"\b(sign|log)\s*-?\s*in\b|\blogin\b|anmelden|se connecter|"
                         r"iniciar sesi[óo]n|accedi", re.I)
_LOGIN_ASK = re.compile(r"(sign|log)\s*-?\s*in to (continue|view|see|access|read)|"
                        r"(you must|you need to|please) (be )?(sign|log)(ged)?\s*-?\s*in|"
                        r"members only|login required|authentication required", re.I)
_CONSENT_TEXT = re.compile(
    r"before you continue|we value your privacy|we care about your privacy|"
    r"(use|uses|using) cookies|cookie (consent|settings|preferences|policy)|"
    r"your privacy choices|manage (your )?(cookie|privacy|consent)|consent to|"
    r"bevor sie fortfahren|wir verwenden cookies|nous utilisons des cookies|"
    r"utilizamos cookies", re.I)
_CONSENT_HEAD = re.compile(r"cookie|privacy|consent|datenschutz|confidentialit|privacidad|"
                           r"before you continue|bevor sie", re.I)
_ACCEPT = re.compile(r"accept( all)?|agree|i consent|alle akzeptieren|zustimmen|"
                     r"tout accepter|accepter|aceptar", re.I)


# Speed: a case-insensitive Python pattern that starts with letters is tried at every position
# of the markup (no prefix scan), milliseconds a page. The markup is therefore first searched,
# folded, with the same pattern without IGNORECASE (a prefix scan), and the original pattern
# runs only where that finds something. Folding maps every character IGNORECASE equates with
# an ASCII letter onto it, one character for one (``İ`` and the dotless ``ı`` to ``i``, the
# long ``ſ`` to ``s``; the Kelvin sign ``K`` lower-cases to ``k``), so the folded search finds
# a match wherever the original does: it only skips pages, the verdicts are the original's.
_FOLD = {0x130: "i", 0x131: "i", 0x17F: "s"}


def _folded(markup: str) -> str:
    """``markup`` lower-cased with IGNORECASE's ASCII equivalents folded (same length)."""
    if "\u0130" in markup or "\u0131" in markup or "\u017f" in markup:
        markup = markup.translate(_FOLD)
    return markup.lower()


def _lower_pattern(pattern: re.Pattern) -> re.Pattern:
    """``pattern`` (ASCII, IGNORECASE) for folded text: its literals lower-cased, no flag."""
    assert pattern.pattern.isascii() and pattern.flags & re.I
    return re.compile(re.sub(r"\\.|([A-Z])", lambda m: m.group(1).lower() if m.group(1)
                             else m.group(0), pattern.pattern))


_CHALLENGE_FOLDED = _lower_pattern(_CHALLENGE)


@dataclass(frozen=True)
class PageFacts:
    """The page-level signals of one payload (see the module docstring)."""

    title: str | None
    h1: str | None
    words: int
    not_found: str | None  # "strong", "weak" or None
    wall: str | None       # one of WALLS or None
    wall_evidence: str | None


def _title_and_h1(markup: str) -> tuple[str | None, str | None]:
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(markup[:2_000_000])
    t = tree.css_first("title")
    h = tree.css_first("h1")
    title = " ".join((t.text() or "").split()) if t is not None else None
    h1 = " ".join((h.text() or "").split()) if h is not None else None
    return title or None, h1 or None


def is_not_found_phrase(text: str | None) -> bool:
    """True when ``text`` (a title or heading), or one of its separated segments, *is* a
    not-found phrase."""
    if not text:
        return False
    if _NF_FULL.match(text):
        return True
    return any(_NF_FULL.match(seg) for seg in _TITLE_SEP.split(text) if seg.strip())


def is_not_found_sentence(line: str) -> bool:
    """True for a short line that says a page is missing ("Sorry, we couldn't find that
    page."): a server's own not-found message, as its probe page shows it."""
    return len(line) <= 200 and _NF_SENTENCE.search(line) is not None


def not_found_signal(title: str | None, h1: str | None, words: int) -> str | None:
    """``strong``, ``weak`` or None (see the module docstring)."""
    t, h = is_not_found_phrase(title), is_not_found_phrase(h1)
    if (t and h and words <= 400) or ((t or h) and words <= 150):
        return "strong"
    full = t or h
    if full or any(t and _NF_ANY.search(t) for t in (title, h1)):
        return "weak"
    return None


def wall_of(markup: str, text: str, title: str | None, h1: str | None, words: int
            ) -> tuple[str | None, str | None]:
    """(wall kind, the evidence) or (None, None)."""
    head = " ".join(x for x in (title, h1) if x)
    sample = markup[:300_000]
    folded = _folded(sample)  # a fast pre-search; the original pattern decides (see _FOLD)
    if words <= 300 and ((_CHALLENGE_FOLDED.search(folded) and _CHALLENGE.search(sample))
                         or (title and _CHALLENGE_TITLE.match(title))):
        return "bot_challenge", "challenge markers"
    # every branch of _FREE_FALSE holds the name: a substring test is the pre-search
    if "isaccessibleforfree" in folded and _FREE_FALSE.search(sample):
        return "paywall", "schema.org isAccessibleForFree false"
    if words <= 600 and _PAYWALL_TEXT.search(text):
        return "paywall", "subscribe-to-read text"
    if words <= 250 and _PASSWORD.search(sample) and (
            _LOGIN_ASK.search(text) or _LOGIN_TEXT.search(head)):
        return "login_wall", "password form on a short page"
    if words <= 250 and _CONSENT_TEXT.search(text) and _ACCEPT.search(text) and (
            _CONSENT_HEAD.search(head) or re.search(r"before you continue|bevor sie", text,
                                                    re.I)):
        return "consent_wall", "consent interstitial"
    return None, None


def page_facts(markup: str, text: str, rendered: bool = False) -> PageFacts:
    """The signals of one decoded page (``markup``) and its extracted text; ``rendered``: the
    markup is a browser's rendered DOM (citeaudit/archive/capture/browser.py)."""
    title, h1 = _title_and_h1(markup)
    words = len(text.split())
    wall, evidence = wall_of(markup, text, title, h1, words)
    not_found = not_found_signal(title, h1, words)
    if wall is None and not_found != "strong":
        # a static capture of a page a script renders: its text is not the page's content
        shell = script_shell(markup, rendered=rendered, words=words)
        if shell is not None:
            wall, evidence = "script_shell", shell
    return PageFacts(title, h1, words, not_found, wall, evidence)
