"""Perplexity Sonar answers (chat completions with ``citations`` and ``search_results``).

The answer is ``choices[0].message.content``; a marker ``[n]`` cites ``citations[n-1]``
(1-based), with its title and publication date from ``search_results[n-1]`` when that entry is
the same URL. The markers carry no offsets: each is cut out of the text and cites the sentence
or clause it follows. Sources listed but never marked are kept as retrieved-not-cited context,
not as citations. A marker beyond the list is a defect, never dropped.
"""

from __future__ import annotations

import re

from citeaudit.imports.engine_answer import Defect, Parsed, ShapeError, cost, rfc3339
from citeaudit.imports.engine_text import Cite, build_claims

MARKER = re.compile(r"\[(\d{1,4})\]")


def _sources(obj: dict, defects: list[Defect]) -> list[dict]:
    """One entry per listed source: url, and title/date where search_results give them."""
    urls = obj.get("citations")
    results = obj.get("search_results")
    results = results if isinstance(results, list) else []
    if urls is None:
        urls = [r.get("url") if isinstance(r, dict) else None for r in results]
    if not isinstance(urls, list):
        defects.append(Defect("citations", "wrong_type", "not a list"))
        return []
    out = []
    for i, url in enumerate(urls):
        if not isinstance(url, str) or not url:
            defects.append(Defect(f"citations[{i}]", "wrong_type", "not a URL string"))
            url = ""
        src: dict = {"url": url}
        r = results[i] if i < len(results) and isinstance(results[i], dict) else {}
        if r.get("url") == url:
            for key in ("title", "date", "last_updated"):
                if isinstance(r.get(key), str):
                    src[key] = r[key]
        out.append(src)
    return out


def _year(date: str | None) -> int | None:
    return int(date[:4]) if date and re.match(r"\d{4}-", date) else None


def parse(obj: object) -> Parsed:
    """Read one Perplexity Sonar response."""
    if not isinstance(obj, dict):
        raise ShapeError("", "not_an_object")
    choices = obj.get("choices")
    if not (isinstance(choices, list) and choices and isinstance(choices[0], dict)):
        raise ShapeError("choices", "unknown_shape", "no choices[0]")
    message = choices[0].get("message")
    if not isinstance(message, dict) or not isinstance(message.get("content"), str):
        raise ShapeError("choices[0].message.content", "missing_field")
    text = message["content"]
    defects: list[Defect] = []
    sources = _sources(obj, defects)
    marks = []
    for m in MARKER.finditer(text):
        n = int(m.group(1))
        if not 1 <= n <= len(sources):
            defects.append(Defect("choices[0].message.content", "citation_index_out_of_range",
                                  f"marker [{n}] at {m.start()} with {len(sources)} sources"))
            continue
        src = sources[n - 1]
        cite = Cite(src["url"], title=src.get("title"), year=_year(src.get("date")))
        marks.append((m.start(), m.end(), [cite]))
    claims, orphans = build_claims(text, marks=marks)
    defects += [Defect("choices[0].message.content", "citation_without_claim",
                       f"marker at {a} follows no text") for a, _, _ in orphans]
    return Parsed(text, claims, model=obj.get("model"),
                  created_at=rfc3339(obj.get("created"), "created"),
                  response_id=obj.get("id"), retrieved=[s for s in sources if s["url"]],
                  cost=cost(obj.get("usage"), "prompt_tokens", "completion_tokens"),
                  defects=defects)
