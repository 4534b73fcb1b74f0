"""Answers of the demo corpus: prose, claims, citations, planted defects and their verdicts.

:func:`build_answer` is pure in ``(world, panel, observation day, slot, attempt)``: it writes an
answer whose claims restate facts of the query's topic and cite pages (web engines) or
knowledge-base chunks (``inhouse_rag``) that state those facts, remembering for each citation
the *latent* support relation the annotation generator later turns into human labels.

Two kinds of planted defect live here:

* claim-level (on lines that ingest cleanly): an uncited claim, one malformed tag or URL, or
  (RAG) one tag whose chunk was not in the generator's context; at most one per claim, so the
  claim's first failure is known;
* line-level (:func:`apply_line_defect`): exactly one per bad line, so the ``rejected_inputs``
  row it must produce is unambiguous.

:func:`verify_citations` restates the fail-closed verification rule
(docs/references.md#fail-closed-verification) independently of how defects were planted;
the generator derives ground truth from it and asserts it agrees with what was planted.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from urllib.parse import quote as urlquote

from citeaudit.demo_corpus import crawl, pages, regression, vocab
from citeaudit.demo_corpus.world import (
    WEB_TYPES,
    Panel,
    Query,
    World,
    cap,
    fact,
    kb_doc,
    rfc3339,
    rng_for,
    stable_hex,
    web_source,
)

Span = tuple[int, int]

P_DECLINE = {"health": 0.05, "legal": 0.05, "finance": 0.03}  # others: 0.02
P_UNCITED = 0.04
P_MALFORMED = 0.02
P_HALLUCINATED_CLAIM = 0.045  # ≈ 3% of RAG citations at ~1.5 citations per claim
P_WRONG_VALUE = 0.06
P_PARTIAL_FORM = 0.12

TAG_RE = re.compile(r"\[([^:\s]+):([^:\s]+)\]")
URL_RE = re.compile(r"https?://[^\s/?#]+([/?#]\S*)?", re.IGNORECASE)

MALFORMED_TAGS = (
    "[{d} :{c}]", "[{d}]", "[:{c}]", "{d}:{c}", "[{d}:]", "[{d}:{c}:x]", "({d}:{c})",
    "[{d}: {c}]", "", None,
)
MALFORMED_URLS = (
    "htp//{h}{p}", "", "{h}{p}", "https:///{p2}", "/{p2}", "http//{h}{p}", "https:/{h}{p}",
    "ftp://{h}{p}",
)


@dataclass
class CitationDraft:
    """A citation and what the generator knows about it (never written to the answer)."""

    obj: dict
    kind: str  # "web" or "kb"
    index: int  # web source g or KB document k
    version: int
    latent: str  # supports, partial, no_support, contradicts, unresolved
    quote_span: Span | None
    defect: str = ""


@dataclass
class ClaimDraft:
    """A claim, its citations and its planted defect (``""`` when clean)."""

    obj: dict
    metric: int  # -1 for an opinion claim
    citations: list[CitationDraft]
    defect: str = ""


@dataclass
class AnswerDraft:
    """One generated answer before serialisation, with the facts behind it."""

    obj: dict
    query: Query
    engine: str
    day: int
    claims: list[ClaimDraft]
    disclosures: dict[int, Span] = field(default_factory=dict)  # claim index → answer span
    forced_done: bool = False


def day_start(world: World, day: int) -> datetime:
    """Midnight UTC of observation day ``day``."""
    return datetime.combine(world.start + timedelta(days=day), time())


def answer_id(engine: str, world: World, day: int, slot: int) -> str:
    """Readable, unique id: engine prefix, observation date and panel slot."""
    d = world.start + timedelta(days=day)
    return f"{vocab.ENGINE_PREFIX[engine]}-{d:%Y%m%d}-{slot:06d}"


def _claim_sentence(world: World, q: Query, metric: int, rng, wrong: bool, partial: bool
                    ) -> tuple[str, float, str]:
    """An answer's restatement of a fact; returns (sentence, value stated, form)."""
    f = fact(world.seed, q.topic, metric)
    spec = f.spec
    value = f.alt_value if wrong else f.value
    form = "full"
    cond = f.cond
    if partial:
        form = "partial"
        cond = "" if f.cond else rng.choice(vocab.OVERGENERALIZATIONS[q.domain])
    template = rng.choice(spec.claim)
    text = template.format(s=q.subject, S=cap(q.subject), v=vocab.format_value(spec.unit, value),
                           c=cond, year=2025, site="")
    return cap(text), value, form


def _latent(stated: float | None, claimed: float, form: str) -> str:
    if stated is None:
        return "no_support"
    if stated != claimed:
        return "contradicts"
    return "partial" if form == "partial" else "supports"


def _quote_variant(rng, text: str) -> str:
    """Usually verbatim; sometimes a clipped or whitespace/case-normalised copy, as engines do."""
    r = rng.random()
    if r < 0.08 and " " in text:
        words = text.split(" ")
        return " ".join(words[: max(3, len(words) * 2 // 3)])
    if r < 0.12:
        return text[:1].lower() + text[1:].replace(" ", "  ", 1)
    return text


def _decorate_url(rng, url: str, engine: str, quote: str | None) -> str:
    """What an engine links to: sometimes with tracking parameters, text fragments, odd case."""
    r = rng.random()
    if r < 0.06:
        suffix = rng.choice(vocab.TRACKING_SUFFIXES).format(hex=f"{rng.getrandbits(40):010x}")
        url = url + ("&" if "?" in url else "?") + suffix
    elif r < 0.07:
        scheme, rest = url.split("://", 1)
        host, _, path = rest.partition("/")
        url = f"{scheme}://{host.upper()}/{path}"
    elif r < 0.08:
        scheme, rest = url.split("://", 1)
        host, _, path = rest.partition("/")
        port = 443 if scheme == "https" else 80
        url = f"{scheme}://{host}:{port}/{path}"
    if engine == "google_ai_overview" and quote and rng.random() < 0.3:
        words = " ".join(quote.split(" ")[:5])
        url = url + "#:~:text=" + urlquote(words, safe="")
    return url


class AnswerBuilder:
    """Builds answers for one world and panel; remembers which sources were cited when."""

    def __init__(self, world: World, panel: Panel, per_day: list[int]) -> None:
        self.world = world
        self.panel = panel
        self.per_day = per_day
        days = world.days
        self.cited_web = [bytearray(world.scale.n_web) for _ in range(days)]
        self.cited_kb = [bytearray(world.scale.n_kb) for _ in range(days)]

    # ------------------------------------------------------------------ sources
    def _pick_web(self, rng, q: Query, engine: str, metric: int | None, opinion: bool,
                  exclude: set[int], c: int) -> int:
        s = self.world.scale.web_per_topic
        weights = vocab.ENGINE_TYPE_WEIGHTS[engine]
        top = max(weights)
        fallback = None
        for _ in range(8):
            g = q.topic * s + int(s * rng.random() ** 1.7)
            if g in exclude:
                continue
            src = web_source(self.world, g)
            if rng.random() > weights[WEB_TYPES.index(src.source_type)] / top:
                continue
            if fallback is None:
                fallback = g
            if opinion and src.source_type in ("web_page", "vendor", "forum"):
                return g
            if metric is not None and src.has_fact(metric, src.version_at(c)):
                return g
        if fallback is not None:
            return fallback
        for i in range(s):
            g = q.topic * s + (i + rng.randrange(s)) % s
            if g not in exclude:
                return g
        return q.topic * s

    def _web_citation(self, rng, q: Query, engine: str, observed: datetime, day: int, g: int,
                      metric: int, claimed: float, form: str, cid: str) -> CitationDraft:
        world = self.world
        c = day + 1
        src = web_source(world, g)
        version = src.version_at(c)
        page = pages.web_page_text(world, src, version)
        reachable = src.plan not in ("dead", "loop") and c < src.die_crawl
        quote: str | None = None
        span: Span | None = None
        para: Span | None = None
        if metric >= 0:
            if src.has_fact(metric, version) and metric in page.facts:
                span, para = page.facts[metric]
                stated = src.stated_value(fact(world.seed, q.topic, metric), version)
                latent = _latent(stated, claimed, form)
            else:
                latent = "no_support"
        else:
            span = page.opinion
            latent = "supports" if span else "no_support"
        if span is None and page.sentences:
            span = page.sentences[rng.randrange(len(page.sentences))]
            para = None
        if not reachable:
            span, para = None, None
        if span is not None and rng.random() < 0.78:
            quote = _quote_variant(rng, page.text[span[0]:span[1]])
        if not (reachable and src.plan != "never_captured" and crawl.archived_ok(world, src, c)):
            latent = "unresolved"
        obj: dict = {"citation_id": cid, "source_id": src.source_id}
        obj["url"] = _decorate_url(rng, src.url, engine, quote)
        p_retrieved = {"perplexity": 0.8, "copilot": 0.5, "google_ai_overview": 0.2}[engine]
        if rng.random() < p_retrieved:
            back = rng.randint(3, 600) if rng.random() > 0.03 else rng.randint(86400, 3 * 86400)
            obj["retrieved_at"] = rfc3339(observed - timedelta(seconds=back))
        if quote is not None and para is not None and rng.random() < 0.6:
            obj["chunk_offset"] = [para[0], para[1]]
        if quote is not None:
            obj["quote"] = quote
        obj["source_type"] = src.source_type
        if src.scholarly is not None:
            title, authors, year, venue, doi = src.scholarly
            obj["title"] = title
            obj["authors"] = list(authors)
            obj["year"] = year
            obj["venue"] = venue
            if doi:
                obj["doi"] = doi
        self.cited_web[day][g] = 1
        return CitationDraft(obj, "web", g, version, latent, span if quote else None)

    # ------------------------------------------------------------------ answer
    def build(self, day: int, slot: int, attempt: int = 0, plant: bool = True,
              forced: str | None = None, decline: bool | None = None) -> AnswerDraft:
        """Answer ``slot`` of observation day ``day``; ``attempt`` > 0 is a logged retry."""
        world = self.world
        n_day = self.per_day[day]
        q = self.panel.query(slot // len(vocab.ENGINES))
        engine = vocab.ENGINES[slot % len(vocab.ENGINES)]
        rag = engine == "inhouse_rag"
        rng = rng_for(world.seed, "answer", day, slot, attempt)
        observed = day_start(world, day) + timedelta(
            seconds=6 * 3600 + int(slot * 16 * 3600 / max(1, n_day)) + rng.randint(0, 59)
            + attempt * rng.randint(600, 2400)
        )
        aid = answer_id(engine, world, day, slot)
        c = day + 1
        if decline is None:
            decline = rng.random() < P_DECLINE.get(q.domain, 0.02)
        claims: list[ClaimDraft] = []
        context: list[str] = []
        metrics: list[int] = []
        if not decline:
            n_claims = rng.choices((1, 2, 3, 4, 5), weights=(0.08, 0.22, 0.32, 0.25, 0.13))[0]
            metrics = rng.sample(range(len(vocab.METRICS[q.domain])), n_claims)
        if rag and metrics:
            context = self._rag_context(rng, q, metrics, c)

        def new_id(kind: str, *parts: object) -> str:
            return f"{kind}-" + stable_hex(world.seed, kind, day, slot, attempt, *parts, n=16)

        for k, metric in enumerate(metrics):
            wrong = rng.random() < P_WRONG_VALUE
            partial = rng.random() < P_PARTIAL_FORM
            text, claimed, form = _claim_sentence(world, q, metric, rng, wrong, partial)
            cit: list[CitationDraft] = []
            if rag:
                cit = self._rag_citations(rng, q, metric, claimed, form, context, observed, day,
                                          lambda j, k=k: new_id("cit", k, j))
            else:
                n_cit = rng.choices((1, 2, 3), weights=(0.55, 0.33, 0.12))[0]
                used: set[int] = set()
                for j in range(n_cit):
                    g = self._pick_web(rng, q, engine, metric, False, used, c)
                    g = regression.substitute(world, engine, day, q.topic, g, used,
                                              day, slot, attempt, k, j)
                    used.add(g)
                    cit.append(self._web_citation(rng, q, engine, observed, day, g, metric,
                                                  claimed, form, new_id("cit", k, j)))
            vw = True if rng.random() < 0.92 else (None if rng.random() < 0.6 else False)
            claims.append(ClaimDraft({"claim_id": new_id("clm", k), "text": text,
                                      "verification_worthy": vw}, metric, cit))
        if metrics and not rag and rng.random() < 0.2:
            k = len(claims)
            g = self._pick_web(rng, q, engine, None, True, set(), c)
            text = cap(vocab.OPINIONS[q.domain][1].format(s=q.subject))
            cd = self._web_citation(rng, q, engine, observed, day, g, -1, 0.0, "full",
                                    new_id("cit", k, 0))
            vw = False if rng.random() < 0.85 else None
            claims.append(ClaimDraft({"claim_id": new_id("clm", k), "text": text,
                                      "verification_worthy": vw}, -1, [cd]))

        draft = AnswerDraft({}, q, engine, day, claims)
        if plant and claims:
            self._plant_claim_defects(rng, draft, context, forced)
        text, spans, disclosures = self._assemble(rng, draft)
        draft.disclosures = disclosures
        obj: dict = {
            "answer_id": aid,
            "query_id": q.query_id,
            "query_text": q.text,
            "engine": engine,
            "observed_at": rfc3339(observed),
            "answer_text": text,
        }
        if rag:
            obj["context_chunk_ids"] = context
        obj["strata"] = {"domain": q.domain, "risk_band": q.risk_band,
                         "inclusion_prob": q.inclusion_prob}
        if rng.random() >= 0.05:
            base = 350 + 380 * len(context) if rag else rng.randint(900, 2600)
            obj["cost"] = {
                "input_tokens": base + 12 * len(q.text.split()) + rng.randint(0, 120),
                "output_tokens": max(8, len(text) // 4 + rng.randint(-10, 40)),
            }
        out_claims = []
        for cl, span in zip(claims, spans, strict=True):
            o = cl.obj
            out_claims.append({
                "claim_id": o["claim_id"],
                "span": [span[0], span[1]],
                "text": o["text"],
                "verification_worthy": o["verification_worthy"],
                "citations": [cd.obj for cd in cl.citations],
            })
        obj["claims"] = out_claims
        draft.obj = obj
        return draft

    # ------------------------------------------------------------------ RAG
    def _rag_context(self, rng, q: Query, metrics: list[int], c: int) -> list[str]:
        """Chunk ids retrieved for the generator: chunks stating the facts plus distractors."""
        per = self.world.scale.kb_per_topic
        docs = [kb_doc(self.world, q.topic * per + i) for i in range(per)]
        chosen: list[str] = []
        for m in metrics:
            cands = [(d, i) for d in docs for i, ms in enumerate(d.chunks) if m in ms]
            if cands and rng.random() < 0.93:
                d, i = cands[rng.randrange(len(cands))]
                if d.chunk_id(i) not in chosen:
                    chosen.append(d.chunk_id(i))
        pool = [d.chunk_id(i) for d in docs for i in range(len(d.chunks))]
        rng.shuffle(pool)
        for cid in pool[: rng.randint(2, 4)]:
            if cid not in chosen:
                chosen.append(cid)
        rng.shuffle(chosen)
        return chosen[:8] if len(chosen) > 8 else chosen

    def _rag_citations(self, rng, q: Query, metric: int, claimed: float, form: str,
                       context: list[str], observed: datetime, day: int, mk_id) -> list[
                           CitationDraft]:
        world = self.world
        c = day + 1
        by_chunk = []
        for chunk_id in context:
            doc_k = int(chunk_id[3:8])
            doc = kb_doc(world, doc_k)
            i = int(chunk_id.rsplit("_c", 1)[1])
            by_chunk.append((doc, i))
        stating = [(d, i) for d, i in by_chunk if metric in d.chunks[i]]
        picks: list[tuple] = []
        if stating:
            picks.append(stating[rng.randrange(len(stating))])
        else:
            picks.append(by_chunk[rng.randrange(len(by_chunk))])
        if rng.random() < 0.3 and len(by_chunk) > 1:
            other = by_chunk[rng.randrange(len(by_chunk))]
            if other != picks[0]:
                picks.append(other)
        out = []
        for j, (doc, i) in enumerate(picks):
            version = doc.version_at(c)
            page = pages.kb_page_text(world, doc, version)
            chunk = page.chunks[i]
            if metric in doc.chunks[i]:
                span = page.facts[metric][0]
                if not (chunk[0] <= span[0] < chunk[1]):
                    span = _first_sentence_in(page, chunk)
                f = fact(world.seed, q.topic, metric)
                stated = f.alt_value if (version == 1 and i == doc.change_chunk) else f.value
                latent = _latent(stated, claimed, form)
            else:
                span = _first_sentence_in(page, chunk)
                latent = "no_support"
            obj = {
                "citation_id": mk_id(j),
                "tag": f"[{doc.doc_id}:{doc.chunk_id(i)}]",
                "source_id": doc.doc_id,
                "url": doc.url,
                "retrieved_at": rfc3339(observed - timedelta(seconds=rng.randint(1, 5))),
                "chunk_offset": [chunk[0], chunk[1]],
                "quote": page.text[span[0]:span[1]],
                "source_type": "kb_doc",
            }
            self.cited_kb[day][doc.k] = 1
            out.append(CitationDraft(obj, "kb", doc.k, version, latent, span))
        return out

    # ------------------------------------------------------------------ defects
    def _plant_claim_defects(self, rng, draft: AnswerDraft, context: list[str],
                             forced: str | None) -> None:
        rag = draft.engine == "inhouse_rag"
        forced_k = -1
        if forced is not None:
            forced_k = rng.randrange(len(draft.claims))
        for k, cl in enumerate(draft.claims):
            r = rng.random()
            kind = ""
            if k == forced_k:
                kind = forced
                draft.forced_done = True
            elif r < P_UNCITED:
                kind = "missing_citation"
            elif r < P_UNCITED + P_MALFORMED:
                kind = "malformed_citation"
            elif rag and r < P_UNCITED + P_MALFORMED + P_HALLUCINATED_CLAIM:
                kind = "hallucinated_citation"
            if not kind:
                continue
            cl.defect = kind
            if kind == "missing_citation":
                cl.citations = []
                # the rule requires a citation of a worthy claim (or any claim of a RAG
                # answer): an uncited sentence of unknown worthiness would be unresolved
                cl.obj["verification_worthy"] = True
                continue
            j = rng.randrange(len(cl.citations))
            cd = cl.citations[j]
            cd.defect = kind
            cd.latent = "unresolved"
            cd.quote_span = None
            if kind == "malformed_citation":
                if rag:
                    doc_id, chunk_id = cd.obj["tag"][1:-1].split(":")
                    pattern = rng.choice(MALFORMED_TAGS)
                    if pattern is None:
                        del cd.obj["tag"]
                    else:
                        cd.obj["tag"] = pattern.format(d=doc_id, c=chunk_id)
                else:
                    rest = cd.obj["url"].split("://", 1)[1]
                    host, _, path = rest.partition("/")
                    path = "/" + path
                    cd.obj["url"] = rng.choice(MALFORMED_URLS).format(h=host.lower(), p=path,
                                                                      p2=path.lstrip("/"))
            else:  # hallucinated: a well-formed tag whose chunk the generator never saw
                doc_id = cd.obj["tag"][1:-1].split(":")[0]
                doc = kb_doc(self.world, int(doc_id[3:8]))
                options = [doc.chunk_id(i) for i in range(len(doc.chunks))
                           if doc.chunk_id(i) not in context]
                options.append(doc.chunk_id(len(doc.chunks) + rng.randint(2, 9)))
                chunk_id = options[rng.randrange(len(options))]
                cd.obj["tag"] = f"[{doc_id}:{chunk_id}]"
                cd.obj.pop("quote", None)
                cd.obj.pop("chunk_offset", None)

    # ------------------------------------------------------------------ prose
    def _assemble(self, rng, draft: AnswerDraft) -> tuple[str, list[Span], dict[int, Span]]:
        """Join intro, claims (with engine-style markers), disclosures and a closing line."""
        q, engine = draft.query, draft.engine
        if not draft.claims:
            return cap(rng.choice(vocab.DECLINES[q.domain]).format(s=q.subject)), [], {}
        numbers: dict[str, int] = {}
        text = cap(rng.choice(vocab.INTROS[engine]).format(s=q.subject, S=cap(q.subject)))
        spans: list[Span] = []
        disclosures: dict[int, Span] = {}
        aio = engine == "google_ai_overview"
        for k, cl in enumerate(draft.claims):
            text += "\n• " if aio else (" " if k == 0 or rng.random() < 0.75 else "\n\n")
            start = len(text)
            text += cl.obj["text"]
            spans.append((start, len(text)))
            marks = []
            for cd in cl.citations:
                url = cd.obj.get("url", "")
                n = numbers.setdefault(url, len(numbers) + 1)
                marks.append(n)
            if engine == "perplexity":
                text += "".join(f"[{n}]" for n in dict.fromkeys(marks))
            elif engine == "copilot":
                text += "".join(f"[^{n}^]" for n in dict.fromkeys(marks))
            if cl.citations and cl.citations[0].kind == "web":
                src = web_source(self.world, cl.citations[0].index)
                sentence = vocab.DISCLOSURE_SENTENCES.get(src.role)
                if sentence and rng.random() < 0.4:
                    text += " "
                    s0 = len(text)
                    text += sentence.format(site=src.site_name)
                    disclosures[k] = (s0, len(text))
        if not aio and rng.random() < 0.4:
            text += " " + rng.choice(vocab.CLOSINGS)
        return text, spans, disclosures


def _first_sentence_in(page: pages.PageText, chunk: Span) -> Span:
    for s in page.sentences:
        if chunk[0] <= s[0] < chunk[1]:
            return s
    return chunk


# --------------------------------------------------------------------------- line defects
LINE_DEFECTS = ("malformed_json", "missing_field", "wrong_type", "span_out_of_range",
                "invalid_timestamp")
LINE_RATES = (0.010, 0.010, 0.005, 0.005, 0.003)
P_DUPLICATE = 0.003


def serialize(obj: dict) -> str:
    """One JSONL line: compact, UTF-8, keys in the order the generator built them."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def line_defect_applicable(kind: str, obj: dict) -> bool:
    """Can this single defect be planted on the answer (does it have what it needs)?"""
    if kind in ("wrong_type", "span_out_of_range"):
        return bool(obj.get("claims"))
    return True


def apply_line_defect(rng, obj: dict, kind: str) -> tuple[str, str | None]:
    """Corrupt one answer with exactly one defect; returns (line text, field path or None)."""
    obj = json.loads(json.dumps(obj))  # deep copy
    claims = obj.get("claims") or []
    if kind == "malformed_json":
        text = serialize(obj)
        cut = rng.randint(len(text) // 3, len(text) - 2)
        return text[:cut], None
    if kind == "missing_field":
        options = ["answer_id", "engine", "observed_at", "claims"]
        if claims:
            options += ["claim_id"] * 2
            if any(c["citations"] for c in claims):
                options += ["citation_id"] * 2
        choice = rng.choice(options)
        if choice == "claim_id":
            k = rng.randrange(len(claims))
            del claims[k]["claim_id"]
            return serialize(obj), f"claims[{k}].claim_id"
        if choice == "citation_id":
            ks = [k for k, c in enumerate(claims) if c["citations"]]
            k = rng.choice(ks)
            j = rng.randrange(len(claims[k]["citations"]))
            del claims[k]["citations"][j]["citation_id"]
            return serialize(obj), f"claims[{k}].citations[{j}].citation_id"
        del obj[choice]
        return serialize(obj), choice
    if kind == "wrong_type":
        k = rng.randrange(len(claims))
        claims[k]["verification_worthy"] = "U"
        return serialize(obj), f"claims[{k}].verification_worthy"
    if kind == "span_out_of_range":
        k = rng.randrange(len(claims))
        start, end = claims[k]["span"]
        if rng.random() < 0.75:
            claims[k]["span"] = [start, len(obj["answer_text"]) + rng.randint(1, 60)]
        else:
            claims[k]["span"] = [-rng.randint(1, 20), end]
        return serialize(obj), f"claims[{k}].span"
    if kind == "invalid_timestamp":
        obj["observed_at"] = "yesterday"
        return serialize(obj), "observed_at"
    raise ValueError(kind)


# --------------------------------------------------------------------------- verification
def verify_citations(answer: dict) -> list[tuple[int, str]]:
    """The fail-closed verification rule's checks, restated: every failing claim as (claim index,
    reason).

    Per claim, first failure wins: no citations → ``missing_citation`` when the answer lists
    ``context_chunk_ids`` or the claim is marked verification-worthy (otherwise the claim is
    unresolved or exempt, not a failure); a citation with a tag
    (or any citation when the answer lists ``context_chunk_ids``) must be ``[Doc:Chunk]`` with
    both halves non-empty, colon- and whitespace-free, else ``malformed_citation``; otherwise
    its ``url`` must be an absolute http(s) URL with a host. A well-formed tag whose chunk is
    not in ``context_chunk_ids`` is ``hallucinated_citation``.
    """
    context = answer.get("context_chunk_ids")
    failures = []
    for k, claim in enumerate(answer.get("claims") or []):
        cits = claim.get("citations") or []
        if not cits:
            if context is not None or claim.get("verification_worthy") is True:
                failures.append((k, "missing_citation"))
            continue
        for cit in cits:
            tag = cit.get("tag")
            if tag is not None or context is not None:
                m = TAG_RE.fullmatch(tag or "")
                if not m:
                    failures.append((k, "malformed_citation"))
                    break
                if context is not None and m.group(2) not in context:
                    failures.append((k, "hallucinated_citation"))
                    break
            elif not URL_RE.fullmatch(cit.get("url") or ""):
                failures.append((k, "malformed_citation"))
                break
    return failures
