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

Script-rendered pages (a single-page application: the document is a shell, an empty
``#root`` and a script that fetches the text from ``/api/<path>.json``): ``script_shell`` is a
static capture of one (``unresolved``, never "not in page"); ``rendered_by_browser`` is one
captured as a ``fetch.browser`` crawl leaves it (the shell, the script and the JSON it loaded,
and the DOM Chromium rendered as a ``urn:rendered-dom:`` resource record with the shell's
WARC-Date): ``pass``, read from the rendered text. ``script_shell_live`` is cited on the
*last* observation day (a third planted answer): the demo's loopback site serves it, its
script and its JSON (:func:`site_assets`), so ``citeaudit demo-archive`` renders its current
state when Chromium is there (``fetch.browser: auto``); its reference-time capture stays the
static shell, so its verdict is the same with or without a browser.
"""

from __future__ import annotations

import gzip
import html
import io
import json
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
    # plain, gzip, chunked, legacy, truncated, revisit, bad_date; shell (a script shell),
    # rendered (a shell with its script, JSON and rendered DOM, as fetch.browser leaves it)
    mode: str = "plain"
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
    last_day: bool = False  # cited on the last observation day (its own planted answer)


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
        Case("script_shell", "/app/shell", "unresolved", "script_shell", "unresolved",
             [Capture("/app/shell", -2 * h, -1, mode="shell")]),
        Case("rendered_by_browser", "/app/rendered", "pass", "ok", "located",
             [Capture("/app/rendered", -2 * h, -1, mode="rendered")]),
        Case("script_shell_live", "/app/live", "unresolved", "script_shell", "unresolved",
             [Capture("/app/live", -2 * h, -1, mode="shell")], last_day=True),
    ]


APP_JS_PATH = "/static/planted-app.js"
APP_JS = (
    b"(function () {\n"
    b"  var root = document.getElementById('root');\n"
    b"  fetch('/api' + location.pathname + '.json').then(function (r) { return r.json(); })\n"
    b"    .then(function (d) {\n"
    b"      var h = document.createElement('h1'); h.textContent = d.title; root.appendChild(h);\n"
    b"      d.paragraphs.forEach(function (t) {\n"
    b"        var p = document.createElement('p'); p.textContent = t; root.appendChild(p);\n"
    b"      });\n"
    b"    });\n"
    b"})();\n")
"""The planted application's script: it fetches the page's text and renders it into
``#root`` (so the text is there only after the script ran)."""


def shell(title: str = "Planted alignment page") -> str:
    """The static document of a planted script-rendered page: no text of its own."""
    return ("<!DOCTYPE html>\n<html><head><title>" + html.escape(title) + "</title>"
            f"<script src=\"{APP_JS_PATH}\" defer></script></head>\n<body>\n"
            "<noscript>You need to enable JavaScript to run this app.</noscript>\n"
            "<div id=\"root\"></div>\n</body></html>\n")


def api_json(path: str, version: int = 0) -> bytes:
    """What the planted application's script loads for ``path``: the page's text."""
    _, blocks = page(path, version)
    return json.dumps({"title": blocks[0], "paragraphs": blocks[1:]}, sort_keys=True).encode()


def rendered_dom(path: str, version: int = 0) -> str:
    """The DOM headless Chromium serializes once the script has rendered ``path``."""
    _, blocks = page(path, version)
    inner = f"<h1>{html.escape(blocks[0], quote=False)}</h1>" + "".join(
        f"<p>{html.escape(b, quote=False)}</p>" for b in blocks[1:])
    return ("<!DOCTYPE html><html><head><title>" + html.escape(blocks[0]) + "</title>"
            f"<script src=\"{APP_JS_PATH}\" defer=\"\"></script></head><body>\n"
            "<noscript>You need to enable JavaScript to run this app.</noscript>\n"
            f"<div id=\"root\">{inner}</div>\n\n</body></html>")


def live_script_urls() -> list[str]:
    """The cited URLs of the script-rendered cases of the last day (the demo site's planted
    ``script`` page)."""
    return [HOST + c.path for c in _cases()
            if c.last_day and c.path and any(x.mode == "shell" for x in c.captures)]


def site_assets() -> dict[str, tuple[str, bytes]]:
    """URL -> (content type, body) of what the live planted application loads besides its
    documents (which the demo site serves from the supplied WARCs): the script and the JSON of
    each script-rendered case cited on the last day."""
    out = {HOST + APP_JS_PATH: ("application/javascript; charset=utf-8", APP_JS)}
    for case in _cases():
        if case.last_day and case.path and any(c.mode == "shell" for c in case.captures):
            out[f"{HOST}/api{case.path}.json"] = ("application/json", api_json(case.path))
    return out


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


def ref_time(world: World, day: int = 0) -> datetime:
    """The reference time of the planted citations of observation day ``day`` (0: the first)."""
    return datetime.combine(world.start + timedelta(days=day), time()) \
        + timedelta(hours=REF_HOURS)


def _day(world: World, case: Case) -> int:
    """The observation day (index) a case is cited on."""
    return world.days - 1 if case.last_day else 0


def build_answers(world: World, last_day: bool = False) -> list[tuple[AnswerDraft, list[dict]]]:
    """The planted answers and their truth rows: of the first day (``last_day`` False) a clean
    one and one with malformed URLs; of the last day (True) one citing the last-day cases
    (its claims are not verification-worthy: the support sample of the last day, which the
    demo draws, stays as it was)."""
    day = world.days - 1 if last_day else 0
    ref = ref_time(world, day)
    observed = ref + timedelta(minutes=5)
    out = []
    groups = ((2, lambda c: c.last_day),) if last_day else (
        (0, lambda c: not c.malformed and not c.last_day), (1, lambda c: c.malformed))
    for n, member in groups:
        malformed = n == 1
        aid = answer_id(ENGINE, world, day, SLOT + n)
        claims, truth, texts = [], [], []
        for k, case in enumerate(c for c in _cases() if member(c)):
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
                             "verification_worthy": not last_day}, -1, [cd],
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
                        "verification_worthy": not last_day,
                        "citations": [cd.obj for cd in cl.citations]}
                       for cl, sp in zip(claims, spans, strict=True)],
        }
        draft = AnswerDraft(obj, None, ENGINE, day, claims)  # type: ignore[arg-type]
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
    result = WarcResult()
    # (folder day relative to the first observation day, the case's day, capture)
    caps = [(_day(world, case) + c.folder, _day(world, case), c)
            for case in _cases() for c in case.captures]
    ids: dict[tuple[str, int], tuple[str, str, str]] = {}
    for folder in sorted({f for f, _, _ in caps}):
        day = world.start + timedelta(days=folder)
        rel = f"warc/{day.isoformat()}/{FILE_NAME}"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        counts: Counter = Counter()
        with open(path, "wb") as fh:
            writer = WARCWriter(fh, gzip=True, warc_version="1.0")
            for i, (_, cday, cap) in enumerate(c for c in caps if c[0] == folder):
                _write(world, writer, cap, ref_time(world, cday), (folder, i), ids, counts,
                       result, rel)
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
    if cap.status == 200 and cap.mode in ("shell", "rendered"):
        body = shell().encode(charset)
    elif cap.status == 200:
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
    if cap.mode == "rendered":
        _write_rendering(world, writer, cap, when, rid, n, counts, result)


def _rid(world: World, n: tuple[int, int], part: object) -> str:
    return f"<urn:uuid:{stable_uuid(world.seed, 'align', *n, part)}>"


def _write_rendering(world: World, writer: WARCWriter, cap: Capture, when: datetime,
                     document_id: str, n: tuple[int, int], counts: Counter,
                     result: WarcResult) -> None:
    """What a ``fetch.browser`` crawl writes after a shell's response: the responses its
    script loaded (the script, the JSON) and the rendered DOM, a ``resource`` record
    ``urn:rendered-dom:<url>`` with the shell's WARC-Date, WARC-Concurrent-To its record, and
    a ``metadata`` record describing the render."""
    from citeaudit.archive.capture import RENDERED_URN

    url = HOST + cap.path
    loads = [(HOST + APP_JS_PATH, "application/javascript; charset=utf-8", APP_JS),
             (f"{HOST}/api{cap.path}.json", "application/json", api_json(cap.path, cap.version))]
    for k, (sub, ctype, body) in enumerate(loads, start=1):
        at = (when + timedelta(seconds=k)).strftime("%Y-%m-%dT%H:%M:%SZ")
        http = StatusAndHeaders("200 OK", [("Content-Type", ctype),
                                           ("Content-Length", str(len(body)))],
                                protocol="HTTP/1.1")
        writer.write_record(writer.create_warc_record(
            sub, "response", payload=io.BytesIO(body), length=len(body), http_headers=http,
            warc_headers_dict={"WARC-Record-ID": _rid(world, n, k), "WARC-Date": at}))
        counts["response"] += 1
        result.statuses["200"] += 1
    date = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    dom = rendered_dom(cap.path, cap.version).encode("utf-8")
    res_id = _rid(world, n, "dom")
    writer.write_record(writer.create_warc_record(
        RENDERED_URN + url, "resource", payload=io.BytesIO(dom), length=len(dom),
        warc_content_type="text/html; charset=utf-8",
        warc_headers_dict={"WARC-Record-ID": res_id, "WARC-Date": date,
                           "WARC-Concurrent-To": document_id}))
    fields = (f"citeaudit-render: the DOM headless Chromium built from this page\r\n"
              f"why: fetch.browser: auto; static capture is a script shell\r\n"
              f"sub-requests-fetched: {len(loads)}\r\nsub-requests-refused: 0\r\n"
              f"document-record: {document_id}\r\n").encode()
    writer.write_record(writer.create_warc_record(
        RENDERED_URN + url, "metadata", payload=io.BytesIO(fields), length=len(fields),
        warc_content_type="application/warc-fields",
        warc_headers_dict={"WARC-Record-ID": _rid(world, n, "meta"), "WARC-Date": date,
                           "WARC-Refers-To": res_id}))
    counts["resource"] += 1
    counts["metadata"] += 1


