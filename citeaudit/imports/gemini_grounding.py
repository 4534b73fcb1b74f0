"""Google Gemini answers (``generateContent`` with the ``google_search`` tool; AI Studio and
Vertex AI).

The answer is the non-thought text part of ``candidates[0]`` (several are joined in order).
Each ``groundingSupports[]`` entry is a claim: its ``segment`` offsets are **UTF-8 byte**
offsets into the part, converted to code points; proto3 JSON leaves out zero values, so a
missing ``startIndex`` is 0 and a missing ``partIndex`` means the answer part (never part 0,
which may be a thought). The converted span must reproduce ``segment.text``; one that does not
is a defect, not a guess. Each support cites its ``groundingChunks`` by index: ``web.uri`` (a
``grounding-api-redirect`` link the archive stage resolves to the real page) is the URL and
``web.title`` (usually the domain) the title hint.
"""

from __future__ import annotations

from citeaudit.imports.engine_answer import Defect, Parsed, ShapeError, cost, rfc3339
from citeaudit.imports.engine_text import Cite, Claim, build_claims, byte_to_char, trim


def _chunks(gm: dict) -> list[Cite | None]:
    """The web chunks as citations, by index (None for a chunk that is not a web page)."""
    out: list[Cite | None] = []
    for ch in gm.get("groundingChunks") or []:
        web = ch.get("web") if isinstance(ch, dict) else None
        if not isinstance(web, dict) or not isinstance(web.get("uri"), str):
            out.append(None)  # a retrieved-context chunk: defect only if a support cites it
            continue
        extra = {"domain": web["domain"]} if isinstance(web.get("domain"), str) else {}
        out.append(Cite(web["uri"], title=web.get("title"), extra=extra))
    return out


def parse(obj: object) -> Parsed:
    """Read one Gemini ``GenerateContentResponse``."""
    if not isinstance(obj, dict):
        raise ShapeError("", "not_an_object")
    cands = obj.get("candidates")
    if not (isinstance(cands, list) and cands and isinstance(cands[0], dict)):
        raise ShapeError("candidates", "unknown_shape", "no candidates[0]")
    cand = cands[0]
    parts = (cand.get("content") or {}).get("parts")
    if not isinstance(parts, list):
        raise ShapeError("candidates[0].content.parts", "missing_field")
    answer_parts = [i for i, p in enumerate(parts)
                    if isinstance(p, dict) and isinstance(p.get("text"), str)
                    and not p.get("thought")]
    if not answer_parts:
        raise ShapeError("candidates[0].content.parts", "missing_field", "no non-thought text")
    base, text = {}, ""
    for i in answer_parts:
        base[i] = len(text)
        text += parts[i]["text"]
    defects: list[Defect] = []
    gm = cand.get("groundingMetadata") or {}
    chunks = _chunks(gm)
    spans = []
    for k, sup in enumerate(gm.get("groundingSupports") or []):
        where = f"candidates[0].groundingMetadata.groundingSupports[{k}]"
        seg = sup.get("segment") if isinstance(sup, dict) else None
        if not isinstance(seg, dict):
            defects.append(Defect(where + ".segment", "missing_field"))
            continue
        part = seg.get("partIndex")
        if part is None:
            if len(answer_parts) != 1:
                defects.append(Defect(where + ".segment.partIndex", "missing_field",
                                      f"{len(answer_parts)} answer parts"))
                continue
            part = answer_parts[0]
        if part not in base:
            defects.append(Defect(where + ".segment.partIndex", "out_of_range",
                                  f"part {part} is not an answer text part"))
            continue
        ptext = parts[part]["text"]
        b0, b1 = seg.get("startIndex", 0), seg.get("endIndex")
        if not (isinstance(b0, int) and isinstance(b1, int)):
            defects.append(Defect(where + ".segment.endIndex", "missing_field"))
            continue
        c0, c1 = byte_to_char(ptext, [b0, b1])
        if c0 is None or c1 is None or not c0 < c1:
            defects.append(Defect(where + ".segment", "span_out_of_range",
                                  f"bytes [{b0}, {b1}] in a part of "
                                  f"{len(ptext.encode('utf-8'))} bytes"))
            continue
        if "text" in seg and ptext[c0:c1] != seg["text"]:
            defects.append(Defect(where + ".segment.text", "span_text_mismatch",
                                  f"bytes [{b0}, {b1}] hold {ptext[c0:c1][:80]!r}, segment "
                                  f"says {str(seg['text'])[:80]!r}"))
            continue
        cites = []
        for j, idx in enumerate(sup.get("groundingChunkIndices") or []):
            ok = isinstance(idx, int) and 0 <= idx < len(chunks) and chunks[idx] is not None
            if not ok:
                defects.append(Defect(f"{where}.groundingChunkIndices[{j}]",
                                      "citation_index_out_of_range",
                                      f"chunk {idx} of {len(chunks)} web chunks"))
                continue
            cites.append(chunks[idx])
        a, b = trim(text, base[part] + c0, base[part] + c1)
        spans.append(Claim(a, b, cites))
    claims, _ = build_claims(text, spans=spans)
    retrieved = [{"url": c.url, "title": c.title} for c in chunks if c is not None]
    return Parsed(text, claims, model=obj.get("modelVersion"),
                  created_at=rfc3339(obj.get("createTime"), "createTime"),
                  response_id=obj.get("responseId"),
                  search_queries=[q for q in gm.get("webSearchQueries") or []
                                  if isinstance(q, str)],
                  retrieved=retrieved,
                  cost=cost(obj.get("usageMetadata"), "promptTokenCount",
                            "candidatesTokenCount"),
                  defects=defects)
