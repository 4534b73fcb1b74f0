"""What an engine importer hands back, and how it becomes an answer of the input contract.

The contract: docs/inputs.md and docs/architecture.md.

A format module's ``parse(obj)`` returns a :class:`Parsed`: the answer text, its claims (with
the citations found for each), what the engine searched and retrieved, and every
:class:`Defect` found on the way (field path into the response, reason, detail). A response
with any defect is not written as an answer: each defect becomes a ``rejected_inputs`` row, the
way the ingest rejects a bad answers line whole, so a dropped citation can never make the rest
of an answer look verified.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from citeaudit.imports.engine_text import Claim


class ShapeError(ValueError):
    """The response is not of the format asked for (field, reason, detail)."""

    def __init__(self, field: str, reason: str, detail: str = "") -> None:
        super().__init__(f"{field}: {reason} {detail}".strip())
        self.field, self.reason, self.detail = field, reason, detail


@dataclass(frozen=True)
class Defect:
    """One reason a response cannot be imported as it stands."""

    field: str
    reason: str
    detail: str = ""


@dataclass
class Parsed:
    """One engine response, read."""

    text: str
    claims: list[Claim]
    model: str | None = None
    created_at: str | None = None
    response_id: str | None = None
    search_queries: list[str] = field(default_factory=list)
    retrieved: list[dict] = field(default_factory=list)
    cost: dict | None = None
    defects: list[Defect] = field(default_factory=list)


def rfc3339(value: object, field: str = "created_at") -> str | None:
    """A Unix time (seconds) or an RFC 3339 string as ``YYYY-MM-DDTHH:MM:SSZ``; None if absent.

    A value that is no time, or one outside the years 1-9999 (``1e20``, ``Infinity``), raises
    :class:`ShapeError` (``field``, ``invalid_timestamp``): a rejection, never a crash."""
    if value is None:
        return None
    try:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ValueError(f"not a time: {value!r}"[:200])
        if isinstance(value, int | float):
            t = dt.datetime.fromtimestamp(value, tz=dt.UTC)
        else:
            t = dt.datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
            if t.tzinfo is None:
                raise ValueError(f"time without offset: {value!r}"[:200])
        t = t.astimezone(dt.UTC)
    except (ValueError, OverflowError, OSError) as exc:
        raise ShapeError(field, "invalid_timestamp", f"{type(exc).__name__}: {exc}"[:300]
                         ) from None
    return t.isoformat(timespec="microseconds" if t.microsecond else "seconds").replace(
        "+00:00", "Z")


def cost(usage: object, input_key: str, output_key: str) -> dict | None:
    """The contract's ``cost`` from a usage object, when both counts are present."""
    if not isinstance(usage, dict):
        return None
    i, o = usage.get(input_key), usage.get(output_key)
    if isinstance(i, int) and isinstance(o, int) and not isinstance(i | o, bool):
        return {"input_tokens": i, "output_tokens": o}
    return None


def not_cited(retrieved: list[dict], claims: list[Claim]) -> list[dict]:
    """Sources the engine retrieved or listed but no claim cites (first occurrence, in order)."""
    cited = {c.url for cl in claims for c in cl.cites}
    seen: set[str] = set()
    out = []
    for r in retrieved:
        if r["url"] not in cited and r["url"] not in seen:
            seen.add(r["url"])
            out.append(r)
    return out


def to_answer(parsed: Parsed, *, answer_id: str, query_id: str, query_text: str, engine: str,
              observed_at: str, stratum: str, origin: dict) -> dict:
    """The answer object of the contract, with the engine's metadata beside it."""
    claims = []
    for k, cl in enumerate(parsed.claims):
        claim_id = f"{answer_id}:s{k:03d}"
        cites = []
        for j, c in enumerate(cl.cites):
            cite = {"citation_id": f"{claim_id}:c{j:02d}", "source_id": c.url, "url": c.url,
                    "source_type": "web"}
            for key, value in (("title", c.title), ("quote", c.quote), ("year", c.year)):
                if value is not None:
                    cite[key] = value
            cite.update(c.extra)
            cites.append(cite)
        claims.append({"claim_id": claim_id, "span": [cl.start, cl.end],
                       "text": parsed.text[cl.start:cl.end], "verification_worthy": None,
                       "citations": cites})
    answer = {
        "answer_id": answer_id,
        "query_id": query_id,
        "query_text": query_text,
        "engine": engine,
        "observed_at": observed_at,
        "answer_text": parsed.text,
        "strata": {"domain": stratum, "risk_band": "unknown", "inclusion_prob": 1.0},
    }
    if parsed.cost is not None:
        answer["cost"] = parsed.cost
    answer["claims"] = claims
    answer["model"] = parsed.model
    answer["created_at"] = parsed.created_at
    answer["response_id"] = parsed.response_id
    answer["search_queries"] = parsed.search_queries
    answer["retrieved_not_cited"] = not_cited(parsed.retrieved, parsed.claims)
    answer["import"] = origin
    return answer
