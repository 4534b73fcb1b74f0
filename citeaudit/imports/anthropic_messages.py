"""Anthropic answers (Messages API with the ``web_search`` server tool).

The answer is the ``text`` blocks joined in order; a block's offset is the sum of the lengths
of the text blocks before it (the API gives no offsets). Each text block that carries
citations is one claim (its text, blanks trimmed); each citation's ``cited_text`` is the
``quote`` the L2 check looks for in the archived page. The API cuts ``cited_text`` at 150
characters and appends ``...``: that marker is not page text, so it is removed from the quote
and the citation says ``quote_truncated: true``. Uncited blocks are split into sentences.
"""

from __future__ import annotations

from citeaudit.imports.engine_answer import Defect, Parsed, ShapeError, cost
from citeaudit.imports.engine_text import Cite, Claim, build_claims, trim

CUT_AT = 150
CUT_MARK = "..."


def quote_of(cited_text: str) -> tuple[str, bool]:
    """(the quote, whether the API cut it)."""
    if len(cited_text) > CUT_AT and cited_text.endswith(CUT_MARK):
        return cited_text[: -len(CUT_MARK)], True
    return cited_text, False


def parse(obj: object) -> Parsed:
    """Read one Anthropic ``Message``."""
    if not isinstance(obj, dict):
        raise ShapeError("", "not_an_object")
    blocks = obj.get("content")
    if obj.get("type") not in (None, "message") or not isinstance(blocks, list):
        raise ShapeError("content", "unknown_shape", "not a Message with content blocks")
    text, spans, queries, retrieved, joins = "", [], [], [], []
    defects: list[Defect] = []
    for i, block in enumerate(blocks):
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "server_tool_use" and isinstance((block.get("input") or {}).get("query"), str):
            queries.append(block["input"]["query"])
        if kind == "web_search_tool_result" and isinstance(block.get("content"), list):
            for r in block["content"]:
                if isinstance(r, dict) and isinstance(r.get("url"), str):
                    retrieved.append({"url": r["url"], "title": r.get("title"),
                                      "page_age": r.get("page_age")})
        if kind != "text" or not isinstance(block.get("text"), str):
            continue
        body = block["text"]
        cites = []
        for j, c in enumerate(block.get("citations") or []):
            where = f"content[{i}].citations[{j}]"
            if not isinstance(c, dict) or not isinstance(c.get("url"), str):
                defects.append(Defect(where + ".url", "missing_field", str(c.get("type"))
                                      if isinstance(c, dict) else "not an object"))
                continue
            quote, cut = None, False
            if isinstance(c.get("cited_text"), str):
                quote, cut = quote_of(c["cited_text"])
            cites.append(Cite(c["url"], title=c.get("title"), quote=quote,
                              extra={"quote_truncated": True} if cut else {}))
        if block.get("citations"):
            a, b = trim(body, 0, len(body))
            if a == b:
                defects.append(Defect(f"content[{i}].text", "citation_without_claim",
                                      "a cited block holds no text"))
            else:
                spans.append(Claim(len(text) + a, len(text) + b, cites))
        joins.append(len(text))
        text += body
    if not text:
        raise ShapeError("content", "missing_field", "no text block")
    claims, _ = build_claims(text, spans=spans, breaks=joins)
    return Parsed(text, claims, model=obj.get("model"), created_at=None,
                  response_id=obj.get("id"), search_queries=queries, retrieved=retrieved,
                  cost=cost(obj.get("usage"), "input_tokens", "output_tokens"), defects=defects)
