"""OpenAI answers: the Responses API (``web_search`` tool) and Chat Completions search models.

Responses: the answer is the ``output_text`` of the ``message`` items (several parts are joined
in order, their annotation offsets moved by the length before them); each ``url_citation``
annotation has ``start_index``/``end_index`` in code points. Chat search models: the answer is
``choices[0].message.content`` with annotations ``{"url_citation": {...}}``. In both, the span
covers the inline markdown link ``([domain](url))``, not the claim: the link is cut out and the
claim is the sentence or clause it follows (:func:`engine_text.build_claims`).
"""

from __future__ import annotations

from citeaudit.imports.engine_answer import Defect, Parsed, ShapeError, cost, rfc3339
from citeaudit.imports.engine_text import Cite, build_claims


def _marks(annotations: object, base: int, length: int, where: str,
           defects: list[Defect]) -> list[tuple[int, int, list[Cite]]]:
    """The url_citation annotations of one text part as citation marks (offsets into the
    whole answer); bad ones become defects."""
    marks = []
    if annotations is None:
        return marks
    if not isinstance(annotations, list):
        defects.append(Defect(where, "wrong_type", "annotations is not a list"))
        return marks
    for i, ann in enumerate(annotations):
        path = f"{where}[{i}]"
        if not isinstance(ann, dict) or ann.get("type") != "url_citation":
            continue  # file citations and other annotation kinds cite no web page
        body = ann.get("url_citation", ann)
        if not isinstance(body, dict):
            defects.append(Defect(path, "wrong_type", "url_citation is not an object"))
            continue
        start, end, url = body.get("start_index"), body.get("end_index"), body.get("url")
        if not isinstance(url, str) or not url:
            defects.append(Defect(path + ".url", "missing_field"))
            continue
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= length):
            defects.append(Defect(path + ".start_index", "span_out_of_range",
                                  f"[{start}, {end}] in a text of {length} characters"))
            continue
        marks.append((base + start, base + end, [Cite(url, title=body.get("title"))]))
    return marks


def _responses(obj: dict, defects: list[Defect]) -> Parsed:
    text, marks, queries, retrieved = "", [], [], []
    for i, item in enumerate(obj["output"]):
        if not isinstance(item, dict):
            continue
        if item.get("type") == "web_search_call":
            action = item.get("action") or {}
            if isinstance(action.get("query"), str):
                queries.append(action["query"])
            for s in action.get("sources") or []:
                if isinstance(s, dict) and isinstance(s.get("url"), str):
                    retrieved.append({"url": s["url"]})
        if item.get("type") != "message":
            continue
        for j, part in enumerate(item.get("content") or []):
            if not isinstance(part, dict) or part.get("type") != "output_text":
                continue
            body = part.get("text")
            if not isinstance(body, str):
                defects.append(Defect(f"output[{i}].content[{j}].text", "wrong_type"))
                continue
            marks += _marks(part.get("annotations"), len(text), len(body),
                            f"output[{i}].content[{j}].annotations", defects)
            text += body
    if not text:
        raise ShapeError("output", "missing_field", "no message with output_text")
    claims, orphans = build_claims(text, marks=marks)
    defects += [Defect("output", "citation_without_claim", f"link at {a} follows no text")
                for a, _, _ in orphans]
    return Parsed(text, claims, model=obj.get("model"),
                  created_at=rfc3339(obj.get("created_at"), "created_at"),
                  response_id=obj.get("id"), search_queries=queries, retrieved=retrieved,
                  cost=cost(obj.get("usage"), "input_tokens", "output_tokens"), defects=defects)


def _chat(obj: dict, defects: list[Defect]) -> Parsed:
    choices = obj["choices"]
    if not (isinstance(choices, list) and choices and isinstance(choices[0], dict)):
        raise ShapeError("choices", "missing_field", "no choices[0]")
    message = choices[0].get("message")
    if not isinstance(message, dict) or not isinstance(message.get("content"), str):
        raise ShapeError("choices[0].message.content", "missing_field")
    text = message["content"]
    marks = _marks(message.get("annotations"), 0, len(text), "choices[0].message.annotations",
                   defects)
    claims, orphans = build_claims(text, marks=marks)
    defects += [Defect("choices[0].message.content", "citation_without_claim",
                       f"link at {a} follows no text") for a, _, _ in orphans]
    return Parsed(text, claims, model=obj.get("model"),
                  created_at=rfc3339(obj.get("created"), "created"),
                  response_id=obj.get("id"),
                  cost=cost(obj.get("usage"), "prompt_tokens", "completion_tokens"),
                  defects=defects)


def parse(obj: object) -> Parsed:
    """Read one OpenAI response (Responses API or Chat Completions)."""
    if not isinstance(obj, dict):
        raise ShapeError("", "not_an_object")
    defects: list[Defect] = []
    if isinstance(obj.get("output"), list):
        return _responses(obj, defects)
    if "choices" in obj:
        return _chat(obj, defects)
    raise ShapeError("", "unknown_shape", "neither a Responses object (output) nor a chat "
                     "completion (choices)")
