"""A labelled set for the soft-404 detector, generated: many small sites, each with its own
template (language, boilerplate size, how it answers a missing page) and its own pages, plus
the traps a detector must not fall into (an article about HTTP errors, short pages sharing
most of their text with the home page, a cited home page, legitimate redirects, a cookie
banner above a full article).

``site.get(path)`` answers like a server (status, Location, HTML); :func:`fetch` follows the
redirects like the crawler. Each case is (site, cited path, label): ``True`` when the cited
page does not exist (a person reading it would say "not found"), ``False`` when it does.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

BEHAVIOURS = ("hard_404", "nf_template", "generic_sorry", "redirect_home", "redirect_404_page",
              "home_at_any_path", "search_page", "hard_410", "sorry_with_related")
"""How a site answers a missing page: a real 404/410, a 200 "Page not found" template, a 200
"sorry" page with the site's title, a redirect to the home page, a redirect to /404.html (200),
the home page at any path (no redirect), a 200 search page about the path's words, a 200 "sorry"
page under the site's title listing other articles picked at random per request (no probe can
match it and its title says nothing: the detector is expected to miss these)."""

LANGS = {
    "en": ("Page not found", "Sorry, we couldn't find that page.", "Home", "News", "About",
           "Contact", "Privacy policy", "All rights reserved"),
    "de": ("Seite nicht gefunden", "Diese Seite existiert leider nicht.", "Startseite",
           "Nachrichten", "Über uns", "Kontakt", "Datenschutz", "Alle Rechte vorbehalten"),
    "fr": ("Page introuvable", "Désolé, cette page n'existe pas.", "Accueil", "Actualités",
           "À propos", "Contact", "Confidentialité", "Tous droits réservés"),
    "es": ("Página no encontrada", "Lo sentimos, no encontramos esa página.", "Inicio",
           "Noticias", "Acerca de", "Contacto", "Privacidad", "Todos los derechos reservados"),
    "ja": ("ページが見つかりません", "お探しのページは見つかりませんでした。", "ホーム", "ニュース",
           "会社概要", "お問い合わせ", "プライバシー", "無断転載を禁じます"),
}

WORDS = ("river", "city", "council", "budget", "school", "energy", "market", "health",
         "study", "data", "research", "water", "policy", "climate", "transport", "museum",
         "history", "science", "report", "season", "team", "league", "election", "court",
         "housing", "vaccine", "trial", "harvest", "bridge", "festival", "library")


def _para(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


@dataclass
class Site:
    name: str
    lang: str
    behaviour: str
    nav_items: int
    articles: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)
    cookie_banner: bool = False
    h1s: dict[str, str] = field(default_factory=dict)
    search_box: bool = False

    @property
    def origin(self) -> str:
        return f"https://{self.name}"

    def _page(self, title: str, body: str, h1: str | None = None) -> str:
        t = LANGS[self.lang]
        nav = "".join(f"<li><a href='/s{i}'>{t[3]} {i}</a></li>" for i in range(self.nav_items))
        banner = ("<div id='cookie-banner'><p>We use cookies to improve your experience. "
                  "Manage cookie settings.</p><button>Accept all</button></div>"
                  if self.cookie_banner else "")
        search = ("<form><p>Can't find what you're looking for? Try our search.</p></form>"
                  if self.search_box else "")
        foot = (f"{search}<footer><a href='/about'>{t[4]}</a> <a href='/contact'>{t[5]}</a> "
                f"<a href='/privacy'>{t[6]}</a><p>© {self.name}. {t[7]}.</p></footer>")
        head = f"<h1>{h1}</h1>" if h1 else ""
        return (f"<html lang='{self.lang}'><head><title>{title}</title></head><body>{banner}"
                f"<nav><a href='/'>{t[2]}</a><ul>{nav}</ul></nav><main>{head}{body}</main>"
                f"{foot}</body></html>")

    def home(self) -> str:
        teasers = "".join(f"<h2><a href='{p}'>{a[0]}</a></h2>"
                          for p, a in list(self.articles.items())[:6])
        return self._page(self.name, f"<section>{teasers}</section>", h1=self.name)

    def missing(self, path: str) -> str:
        t = LANGS[self.lang]
        if self.behaviour == "nf_template":
            return self._page(f"{t[0]} | {self.name}",
                              f"<p>{t[1]}</p><p><code>{path}</code></p>", h1=t[0])
        if self.behaviour == "generic_sorry":
            return self._page(self.name, f"<p>{t[1]}</p><p>{path}</p>")
        if self.behaviour == "sorry_with_related":
            # random per request, deterministic per (site, path)
            picks = random.Random(f"{self.name}{path}").sample(
                sorted(self.articles), k=min(3, len(self.articles)))
            teasers = "".join(f"<h2><a href='{p}'>{self.articles[p][0]}</a></h2>"
                              f"<p>{self.articles[p][1][0]}</p>" for p in picks)
            return self._page(self.name, f"<p>{t[1]}</p><section>{teasers}</section>")
        if self.behaviour == "search_page":
            words = " ".join(w for w in path.strip("/").replace("-", " ").split("/"))
            return self._page(f"Search: {words} | {self.name}",
                              f"<p>Results for {words}</p><p>No results.</p>")
        return self._page(t[0], f"<p>{t[1]}</p>", h1=t[0])

    def get(self, path: str) -> tuple[int, str | None, str]:
        """(status, Location, HTML) for ``path``, as this site's server answers it."""
        if path in ("/", ""):
            return 200, None, self.home()
        if path in self.redirects:
            return 301, self.origin + self.redirects[path], ""
        if path in self.articles:
            title, paras = self.articles[path]
            body = "".join(f"<p>{p}</p>" for p in paras)
            return 200, None, self._page(f"{title} | {self.name}", body,
                                         h1=self.h1s.get(path, title))
        if path == "/404.html":
            return 200, None, self.missing(path)
        b = self.behaviour
        if b == "hard_404":
            return 404, None, self.missing(path)
        if b == "hard_410":
            return 410, None, self.missing(path)
        if b == "redirect_home":
            return 302, self.origin + "/", ""
        if b == "redirect_404_page":
            return 302, self.origin + "/404.html", ""
        if b == "home_at_any_path":
            return 200, None, self.home()
        return 200, None, self.missing(path)


def fetch(site: Site, path: str) -> tuple[str, int, int, str]:
    """(final URL, final status, hops, final HTML) after following redirects (at most 5)."""
    url, hops = site.origin + path, 0
    while True:
        p = url[len(site.origin):] or "/"
        status, loc, html = site.get(p)
        if status in (301, 302) and loc and hops < 5:
            url, hops = loc, hops + 1
            continue
        return url, status, hops, html


def _article(rng: random.Random, long: bool) -> tuple[str, list[str]]:
    title = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 7))).title()
    n = rng.randint(6, 14) if long else rng.randint(1, 2)
    return title, [_para(rng, rng.randint(25, 60) if long else rng.randint(8, 16))
                   for _ in range(n)]


HTTP_ERRORS_ARTICLE = (
    "What does “404 Not Found” mean? A guide to HTTP errors",
    ["When a server cannot find the page you asked for it answers 404 Not Found. " * 3,
     "A 410 Gone says the page existed and was removed on purpose. " * 3,
     "Soft 404s are pages that say not found but answer 200 OK, which confuses crawlers. " * 3,
     "Page not found errors are common after a site redesign; redirects fix them. " * 3,
     "Error 404 pages should be helpful: a search box and links home. " * 3])


def generate(seed: int = 27, sites_per_behaviour: int = 10
             ) -> list[tuple[Site, str, bool, str]]:
    """[(site, cited path, is_missing, what the case is)], deterministic for ``seed``."""
    rng = random.Random(seed)
    cases: list[tuple[Site, str, bool, str]] = []
    langs = sorted(LANGS)
    k = 0
    for behaviour in BEHAVIOURS:
        for i in range(sites_per_behaviour):
            lang = langs[(i + k) % len(langs)]
            k += 1
            site = Site(f"{behaviour.replace('_', '-')}-{i}.example", lang, behaviour,
                        nav_items=rng.choice((3, 12, 40, 120)), cookie_banner=i % 3 == 0,
                        search_box=i % 2 == 1)
            for j in range(6):
                site.articles[f"/news/{2020 + j}/{rng.randint(1000, 9999)}-story"] = \
                    _article(rng, long=j % 3 != 0)
            if i % 4 == 0:
                site.articles["/guides/http-errors"] = HTTP_ERRORS_ARTICLE
            if i % 4 == 1:  # an exhibition called "404", h1 says more, a few hundred words
                site.articles["/exhibitions/404"] = ("404", [_para(rng, 40) for _ in range(6)])
                site.h1s["/exhibitions/404"] = "404: an exhibition about lost web pages"
            site.redirects["/old/story"] = next(iter(site.articles))
            site.redirects["/index.html"] = "/"
            for path in site.articles:
                cases.append((site, path, False, "article"))
            cases.append((site, "/old/story", False, "legitimate redirect"))
            cases.append((site, "/", False, "home page"))
            cases.append((site, "/index.html", False, "index redirect to root"))
            for j in range(3):
                missing = f"/news/{2019 - j}/{rng.randint(10000, 99999)}-gone-story"
                if behaviour not in ("hard_404", "hard_410"):
                    cases.append((site, missing, True, behaviour))
    return cases
