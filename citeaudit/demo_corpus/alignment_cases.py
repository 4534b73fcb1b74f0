"""Planted alignment cases: citations whose L1 and L2 passage verdicts are known exactly.

Two extra answers on the first observation day (engine ``perplexity``, panel slots 900000+)
cite pages on ``planted-align.example``; their captures are written with warcio into
``warc/<date>/alignment-cases.warc.gz`` on the day before the first observation day, the day
after it, and seven days before it (a folder that holds only the window-edge captures). Every
case lists its expected ``verdict``/``reason`` (citation_existence) and passage ``verdict``
(passage_checks) in ``ground_truth.json`` under ``alignment_cases``; tests demand each is
classified exactly so through a real Dagster materialization.

The reference time of every case is ``REF`` hours after midnight of the first observation day
(the citation's ``retrieved_at``); the codebook window is 7 days before, 1 day after.
"""

from __future__ import annotations

import gzip
import html
import io
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from citeaudit.demo_corpus.answers import (
    AnswerDraft,
    CitationDraft,
    ClaimDraft,
    answer_id,
)
from citeaudit.demo_corpus.world import World, rfc3339, stable_uuid

HOST = "https://planted-align.example"
FILE_NAME = "alignment-cases.warc.gz"
SLOT = 900_000
ENGINE = "perplexity"
REF_HOURS = 12
REVISIT_PROFILE = "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"
REASONS = {200: "OK", 301: "Moved Permanently", 302: "Found", 404: "Not Found", 410: "Gone",
           500: "Internal Server Error", 503: "Service Unavailable"}

SENTENCES = (
    "The planted page states that the annual fee is 42 euros for every member.",
    "Renewals are processed within 10 working days of the request.",
    "Members in the north region pay a reduced fee of 30 euros.",
)
QUOTE = SENTENCES[1]


@dataclass
class Capture:
    """One record to write: when (relative to REF, seconds), folder day offset, what."""

    path: str
    at: int  # seconds relative to the reference time
    folder: int  # crawl folder, in days relative to the first observation day
    status: int = 200
    location: str | None = None
    version: int = 0
    mode: str = "plain"  # plain, gzip, chunked, legacy, truncated, revisit, bad_date
    refers: tuple[str, int] | None = None  # (path, at) of a revisit's original


@dataclass
class Case:
    """One planted citation and what the pipeline must say about it."""

    name: str
    path: str | None  # cited path (None: no url); a full URL when it starts with a scheme
    verdict: str
    reason: str
    passage: str | None  # expected passage verdict, None when the citation has no quote
    captures: list[Capture] = field(default_factory=list)
    quote: str | None = QUOTE
    chunk: str = "right"  # right, wrong, none
    malformed: bool = False
    retrieved: bool = True


def _cases() -> list[Case]:
    d, h = 86400, 3600
    return [
        Case("in_window", "/in-window", "pass", "ok", "located",
             [Capture("/in-window", -2 * h, -1)]),
        Case("window_edge_before", "/edge-before", "pass", "ok", "located",
             [Capture("/edge-before", -7 * d, -7)]),
        Case("window_edge_after", "/edge-after", "pass", "ok", "located",
             [Capture("/edge-after", 1 * d, 1)]),
        Case("out_of_window", "/out-of-window", "unresolved", "no_capture_in_window",
             "unresolved",
             [Capture("/out-of-window", -7 * d - 1, -7), Capture("/out-of-window", d + 1, 1)]),
        Case("same_second", "/same-second", "pass", "ok", "located",
             [Capture("/same-second", -h, -1, status=503),
              Capture("/same-second", -h, -1, status=200)]),
        Case("nearest_side_wins", "/nearest", "dead", "http_404", "unresolved",
             [Capture("/nearest", -3 * h, -1), Capture("/nearest", h, 1, status=404)]),
        Case("redirect_chain", "/chain-a", "pass", "ok", "located",
             [Capture("/chain-a", -h, -1, status=301, location=HOST + "/chain-b"),
              Capture("/chain-b", -h + 1, -1, status=302, location="/chain-c"),
              Capture("/chain-c", -h + 2, -1)]),
        Case("redirect_loop", "/loop-a", "dead", "redirect_loop", "unresolved",
             [Capture("/loop-a", -h, -1, status=302, location=HOST + "/loop-b"),
              Capture("/loop-b", -h + 1, -1, status=302, location=HOST + "/loop-a")]),
        Case("revisit_same_uri", "/revisit", "pass", "ok", "located",
             [Capture("/revisit", -5 * d, -7),
              Capture("/revisit", -h, -1, mode="revisit", refers=("/revisit", -5 * d))]),
        Case("revisit_url_agnostic", "/mirror", "pass", "ok", "located",
             [Capture("/original", -2 * d, -1),
              Capture("/mirror", -h // 2, -1, mode="revisit", refers=("/original", -2 * d))]),
        Case("changed", "/changed", "changed", "content_changed_since_citation", "located",
             [Capture("/changed", -h, -1), Capture("/changed", 6 * h, 1, version=1)],
             quote=SENTENCES[0]),
        Case("dead_410", "/gone", "dead", "http_410", "unresolved",
             [Capture("/gone", -2 * h, -1, status=410)]),
        Case("server_error", "/error", "dead", "http_500", "unresolved",
             [Capture("/error", -2 * h, -1, status=500)]),
        Case("truncated_record", "/truncated", "unresolved", "truncated_record", "unresolved",
             [Capture("/truncated", -2 * h, -1, mode="truncated")]),
        Case("never_captured", "/never", "unresolved", "no_capture_in_window", "unresolved"),
        Case("capture_invalid_date", "/bad-date", "unresolved", "capture_date_invalid",
             "unresolved", [Capture("/bad-date", -2 * h, -1, mode="bad_date")]),
        Case("tracking_params_cited", "/tracked?id=7&utm_source=perplexity&fbclid=IwAR2x9",
             "pass", "ok", "located", [Capture("/tracked?id=7", -2 * h, -1)]),
        Case("tracking_params_captured", "/clean?id=8", "pass", "ok", "located",
             [Capture("/clean?id=8&utm_medium=email", -2 * h, -1)]),
        Case("legacy_charset", "/legacy", "pass", "ok", "located",
             [Capture("/legacy", -2 * h, -1, mode="legacy")], quote="Café fees — 42 €"),
        Case("gzip", "/gzip", "pass", "ok", "located",
             [Capture("/gzip", -2 * h, -1, mode="gzip")]),
        Case("chunked", "/chunked", "pass", "ok", "located",
             [Capture("/chunked", -2 * h, -1, mode="chunked")]),
        Case("quote_moved", "/moved", "pass", "ok", "shifted",
             [Capture("/moved", -2 * h, -1)], chunk="wrong"),
        Case("quote_missing", "/missing", "pass", "ok", "absent",
             [Capture("/missing", -2 * h, -1)],
             quote="Renewals are free of charge for everyone."),
        Case("quote_normalized", "/normalized", "pass", "ok", "normalized",
             [Capture("/normalized", -2 * h, -1)],
             quote="renewals  are processed WITHIN 10 working days"),
        Case("observed_at_reference", "/observed", "pass", "ok", "located",
             [Capture("/observed", -2 * h, -1)], retrieved=False),
        Case("url_with_space", "/with space", "unresolved", "invalid_url", "unresolved",
             malformed=True),
        Case("url_in_angle_brackets", "<" + HOST + "/wrapped>", "unresolved", "invalid_url",
             "unresolved", malformed=True),
        Case("no_url", None, "unresolved", "no_url", "unresolved", malformed=True),
    ]


def _url(path: str | None) -> str | None:
    if path is None:
        return None
    if path.startswith(("<", "http")):
        return path
    return HOST + path


def page(path: str, version: int, legacy: bool = False) -> tuple[str, list[str]]:
    """(HTML, text blocks) of a planted page; text blocks follow the page-text convention."""
    body = list(SENTENCES)
    if version == 1:
        body[0] = "The planted page now states that the annual fee is 55 euros."
    if legacy:
        body.append("Café fees — 42 €")
    blocks = ["Planted alignment page"] + body
    markup = "".join(f"<p>{html.escape(b, quote=False)}</p>\n" for b in blocks[1:])
    doc = ("<!DOCTYPE html>\n<html><head><title>Planted alignment page</title>"
           "<style>p{margin:0}</style></head>\n<body>\n"
           f"<h1>{html.escape(blocks[0])}</h1>\n{markup}</body></html>\n")
    return doc, blocks


def _span(blocks: list[str], text: str) -> tuple[int, int]:
    joined = "\n".join(blocks)
    start = joined.index(text)
    return start, start + len(text)


def ref_time(world: World) -> datetime:
    """The reference time of every planted citation."""
    return datetime.combine(world.start, time()) + timedelta(hours=REF_HOURS)


def build_answers(world: World) -> list[tuple[AnswerDraft, list[dict]]]:
    """The planted answers (a clean one and one with malformed URLs) and their truth rows."""
    ref = ref_time(world)
    observed = ref + timedelta(minutes=5)
    out = []
    for n, malformed in enumerate((False, True)):
        aid = answer_id(ENGINE, world, 0, SLOT + n)
        claims, truth, texts = [], [], []
        for k, case in enumerate(c for c in _cases() if c.malformed == malformed):
            cid = f"cit-al-{case.name}"
            text = f"Planted claim {k} about {case.name.replace('_', ' ')}."
            obj: dict = {"citation_id": cid, "source_id": f"src-al-{case.name}"}
            url = _url(case.path)
            if url is not None:
                obj["url"] = url
            if case.retrieved:
                obj["retrieved_at"] = rfc3339(ref)
            if case.quote is not None:
                _, blocks = page(case.path or "", 0, legacy=case.name == "legacy_charset")
                if case.malformed:
                    pass  # no chunk_offset: nothing to locate without a usable URL
                elif case.chunk == "right":
                    obj["chunk_offset"] = list(_span(blocks, case.quote)) \
                        if case.quote in "\n".join(blocks) else list(_span(blocks, QUOTE))
                elif case.chunk == "wrong":
                    obj["chunk_offset"] = list(_span(blocks, SENTENCES[2]))
                obj["quote"] = case.quote
            obj["source_type"] = "web_page"
            cd = CitationDraft(obj, "web", -1, 0, "unresolved", None,
                               "malformed_citation" if malformed else "")
            cl = ClaimDraft({"claim_id": f"clm-al-{case.name}", "text": text,
                             "verification_worthy": True}, -1, [cd],
                            "malformed_citation" if malformed else "")
            claims.append(cl)
            texts.append(text)
            truth.append({"case": case.name, "answer_id": aid, "claim_id": cl.obj["claim_id"],
                          "citation_id": cid, "url": url, "verdict": case.verdict,
                          "reason": case.reason, "passage": case.passage})
        answer_text, spans = "", []
        for t in texts:
            if answer_text:
                answer_text += " "
            spans.append((len(answer_text), len(answer_text) + len(t)))
            answer_text += t
        obj = {
            "answer_id": aid, "query_id": f"q-al-{n}",
            "query_text": "planted alignment cases", "engine": ENGINE,
            "observed_at": rfc3339(observed), "answer_text": answer_text,
            "strata": {"domain": "consumer_products", "risk_band": "low",
                       "inclusion_prob": 1.0},
            "claims": [{"claim_id": cl.obj["claim_id"], "span": list(sp), "text": cl.obj["text"],
                        "verification_worthy": True,
                        "citations": [cd.obj for cd in cl.citations]}
                       for cl, sp in zip(claims, spans, strict=True)],
        }
        draft = AnswerDraft(obj, None, ENGINE, 0, claims)  # type: ignore[arg-type]
        out.append((draft, truth))
    return out


@dataclass
class WarcResult:
    """Files written (with record counts), response statuses and truncated records."""

    files: list[tuple[str, Counter]] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)
    truncated: list[dict] = field(default_factory=list)


def _chunked(body: bytes) -> bytes:
    out, pos = io.BytesIO(), 0
    while pos < len(body):
        n = min(len(body) - pos, 97)
        out.write(f"{n:x}\r\n".encode() + body[pos:pos + n] + b"\r\n")
        pos += n
    out.write(b"0\r\n\r\n")
    return out.getvalue()


def write_warcs(world: World, root: Path) -> WarcResult:
    """Write every planted capture, one file per folder day, in a stable order."""
    ref = ref_time(world)
    result = WarcResult()
    caps = [c for case in _cases() for c in case.captures]
    ids: dict[tuple[str, int], tuple[str, str, str]] = {}
    for folder in sorted({c.folder for c in caps}):
        day = world.start + timedelta(days=folder)
        rel = f"warc/{day.isoformat()}/{FILE_NAME}"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        counts: Counter = Counter()
        with open(path, "wb") as fh:
            writer = WARCWriter(fh, gzip=True, warc_version="1.0")
            for i, cap in enumerate(c for c in caps if c.folder == folder):
                _write(world, writer, cap, ref, (folder, i), ids, counts, result, rel)
        result.files.append((rel, counts))
    return result


def _write(world: World, writer: WARCWriter, cap: Capture, ref: datetime, n: tuple[int, int],
           ids: dict, counts: Counter, result: WarcResult, rel: str) -> None:
    from citeaudit.demo_corpus.warcs import sha1_b32

    url = HOST + cap.path
    when = ref + timedelta(seconds=cap.at)
    date = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    rid = f"<urn:uuid:{stable_uuid(world.seed, 'align', *n)}>"
    headers = {"WARC-Record-ID": rid, "WARC-Date": date}
    if cap.mode == "bad_date":
        headers["WARC-Date"] = "2026-13-45T99:61:00Z"
    charset = "windows-1252" if cap.mode == "legacy" else "utf-8"
    if cap.status == 200:
        markup, _ = page(cap.path, cap.version, legacy=cap.mode == "legacy")
        body = markup.encode(charset)
    else:
        body = (f"<html><body><h1>{cap.status} {REASONS[cap.status]}</h1></body></html>\n"
                ).encode()
    http_headers = [("Content-Type", f"text/html; charset={charset}")]
    if cap.location:
        http_headers.append(("Location", cap.location))
    if cap.mode == "gzip":
        body = gzip.compress(body, mtime=0)
        http_headers.append(("Content-Encoding", "gzip"))
    if cap.mode == "chunked":
        wire = _chunked(body)
        http_headers.append(("Transfer-Encoding", "chunked"))
    else:
        wire = body
        http_headers.append(("Content-Length", str(len(body))))
    http = StatusAndHeaders(f"{cap.status} {REASONS[cap.status]}", http_headers,
                            protocol="HTTP/1.1")
    if cap.mode == "revisit":
        assert cap.refers is not None
        orig_id, orig_url, orig_date, digest = ids[cap.refers]
        record = writer.create_revisit_record(url, digest, orig_url, orig_date,
                                              http_headers=http, warc_headers_dict=headers)
        record.rec_headers.replace_header("WARC-Profile", REVISIT_PROFILE)
        record.rec_headers.add_header("WARC-Refers-To", orig_id)
        writer.write_record(record)
        counts["revisit"] += 1
        return
    stored = wire
    if cap.mode == "truncated":
        stored = wire[: len(wire) // 2]
        headers["WARC-Truncated"] = "length"
        result.truncated.append({"file": rel, "url": url, "kind": "warc_truncated"})
    record = writer.create_warc_record(url, "response", payload=io.BytesIO(stored),
                                       length=len(stored), http_headers=http,
                                       warc_headers_dict=headers)
    writer.write_record(record)
    counts["response"] += 1
    result.statuses[str(cap.status)] += 1
    ids[(cap.path, cap.at)] = (rid, url, date, sha1_b32(stored))


