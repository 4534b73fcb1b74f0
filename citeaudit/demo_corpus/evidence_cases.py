"""Planted evidence pairs: citations whose archived page says (or does not say) the claim.

One extra answer on the first observation day (engine ``copilot``, panel slot 910000) cites
pages of ``planted-evidence.example``, captured the day before into
``warc/<day before>/evidence-cases.warc.gz``. Each claim is paired with a page that supports it
verbatim, supports it in other words, changes a number, drops a qualification, negates it,
never mentions it, or is not captured at all; ``ground_truth.json`` lists under
``evidence_cases`` the verdict ``support_evidence`` must give each pair (tests demand each).

A claim that drops the page's qualification ("approved for adults" where the page says "for
adults over sixty who have chronic lung disease") keeps every one of its words in the page, so a
lexical locator cannot see it: its expected verdict is ``evidence_located``, recorded with a
``limitation`` note, so the test pins the blind spot instead of hiding it.
"""

from __future__ import annotations

import html
import io
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from citeaudit.demo_corpus.answers import AnswerDraft, CitationDraft, ClaimDraft, answer_id
from citeaudit.demo_corpus.world import World, rfc3339, stable_uuid

HOST = "https://planted-evidence.example"
FILE_NAME = "evidence-cases.warc.gz"
SLOT = 910_000
ENGINE = "copilot"
REF_HOURS = 12
FILLER = (
    "This page is maintained by the regional consumer office.",
    "Opening hours of the office are listed at the bottom of the page.",
)


@dataclass(frozen=True)
class Pair:
    """One planted (claim, page) pair and the verdict the locator must give it."""

    name: str
    claim: str
    page: str | None  # the sentence the page states; None: the page is never captured
    verdict: str


PAIRS = (
    Pair("verbatim", "The Harbor Bridge toll rose to 7 dollars in 2024.",
         "The Harbor Bridge toll rose to 7 dollars in 2024.", "evidence_located"),
    Pair("paraphrase", "Library members can borrow up to 12 books at once.",
         "At any one time, members of the library may borrow 12 books.", "evidence_located"),
    Pair("number_changed", "The museum received 48,000 visitors in March.",
         "The museum received 31,000 visitors in March.", "mismatch_flagged"),
    Pair("qualification_dropped", "The vaccine is approved for adults.",
         "The vaccine is approved for adults over sixty who have chronic lung disease.",
         "evidence_located"),
    Pair("negated", "The city pool is heated during the winter season.",
         "The city pool is not heated during the winter season.", "mismatch_flagged"),
    Pair("never_mentioned", "Penguins migrate across glaciers every autumn.",
         "Parking permits for residents are renewed online each January.",
         "no_evidence_in_page"),
    Pair("not_captured", "The ferry timetable changes on public holidays.", None,
         "unresolved"),
)
LIMITATIONS = {"qualification_dropped": "every claim word is in the page: lexical evidence "
                                        "cannot see a dropped qualification"}


def _path(pair: Pair) -> str:
    return f"/{pair.name.replace('_', '-')}"


def page_text(pair: Pair) -> list[str]:
    """The text blocks of a planted page (title, filler, the stated sentence, filler)."""
    assert pair.page is not None
    return [f"Notice: {pair.name.replace('_', ' ')}", FILLER[0], pair.page, FILLER[1]]


def ref_time(world: World) -> datetime:
    """The reference time of every planted evidence citation."""
    return datetime.combine(world.start, time()) + timedelta(hours=REF_HOURS)


def build_answer(world: World) -> tuple[AnswerDraft, list[dict]]:
    """The planted answer and its truth rows (one per pair)."""
    ref = ref_time(world)
    aid = answer_id(ENGINE, world, 0, SLOT)
    claims, truth, texts = [], [], []
    for pair in PAIRS:
        cid = f"cit-ev-{pair.name}"
        obj = {"citation_id": cid, "source_id": f"src-ev-{pair.name}",
               "url": HOST + _path(pair), "retrieved_at": rfc3339(ref),
               "source_type": "web_page"}
        cd = CitationDraft(obj, "web", -1, 0, "unresolved", None, "")
        cl = ClaimDraft({"claim_id": f"clm-ev-{pair.name}", "text": pair.claim,
                         "verification_worthy": True}, -1, [cd], "")
        claims.append(cl)
        texts.append(pair.claim)
        truth.append({"case": pair.name, "answer_id": aid, "claim_id": cl.obj["claim_id"],
                      "citation_id": cid, "url": obj["url"], "verdict": pair.verdict,
                      "limitation": LIMITATIONS.get(pair.name)})
    answer_text, spans = "", []
    for t in texts:
        if answer_text:
            answer_text += " "
        spans.append((len(answer_text), len(answer_text) + len(t)))
        answer_text += t
    obj = {
        "answer_id": aid, "query_id": "q-ev-0", "query_text": "planted evidence pairs",
        "engine": ENGINE, "observed_at": rfc3339(ref + timedelta(minutes=5)),
        "answer_text": answer_text,
        "strata": {"domain": "consumer_products", "risk_band": "low", "inclusion_prob": 1.0},
        "claims": [{"claim_id": cl.obj["claim_id"], "span": list(sp), "text": cl.obj["text"],
                    "verification_worthy": True, "citations": [cd.obj for cd in cl.citations]}
                   for cl, sp in zip(claims, spans, strict=True)],
    }
    return AnswerDraft(obj, None, ENGINE, 0, claims), truth  # type: ignore[arg-type]


def write_warc(world: World, root: Path) -> tuple[str, dict[str, int]]:
    """Write the captured pages (the day before the first observation day); (file, counts)."""
    day = world.start - timedelta(days=1)
    rel = f"warc/{day.isoformat()}/{FILE_NAME}"
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    when = ref_time(world) - timedelta(hours=2)
    count = 0
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True, warc_version="1.0")
        for i, pair in enumerate(p for p in PAIRS if p.page is not None):
            blocks = page_text(pair)
            markup = "".join(f"<p>{html.escape(b, quote=False)}</p>\n" for b in blocks[1:])
            body = ("<!DOCTYPE html>\n<html><head><title>Notice</title></head>\n<body>\n"
                    f"<h1>{html.escape(blocks[0])}</h1>\n{markup}</body></html>\n").encode()
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8"),
                                               ("Content-Length", str(len(body)))],
                                    protocol="HTTP/1.1")
            headers = {"WARC-Record-ID": f"<urn:uuid:{stable_uuid(world.seed, 'evid', i)}>",
                       "WARC-Date": (when + timedelta(seconds=i)).strftime(
                           "%Y-%m-%dT%H:%M:%SZ")}
            record = writer.create_warc_record(HOST + _path(pair), "response",
                                               payload=io.BytesIO(body), length=len(body),
                                               http_headers=http, warc_headers_dict=headers)
            writer.write_record(record)
            count += 1
    return rel, {"response": count}
