"""The demo corpus generator: deterministic, well-formed, and its ground truth is right.

Ground truth is checked against independent re-implementations of the rules (a line validator,
the fail-closed citation check, a tiny capture index over the WARCs), not against the generator's
own bookkeeping, so a bug in how a defect is planted shows up as a mismatch here.
"""

from __future__ import annotations

import argparse
import base64
import csv
import hashlib
import json
import math
import re
from collections import Counter, defaultdict
from datetime import date, datetime
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest
import yaml
from warcio.archiveiterator import ArchiveIterator

from citeaudit.demo_corpus import generate, register_cli
from citeaudit.demo_corpus.pages import extract_text, web_page_html, web_page_text
from citeaudit.demo_corpus.world import Params, World, kb_doc, web_source

ENGINES = ("perplexity", "copilot", "google_ai_overview", "inhouse_rag")
TS = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
TAG = re.compile(r"\[([^:\s]+):([^:\s]+)\]")
URL = re.compile(r"https?://[^\s/?#]+([/?#]\S*)?", re.IGNORECASE)
TRACKING = re.compile(r"^(utm_.*|fbclid|gclid|mc_eid)$")


# ----------------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The e2e-sized corpus: 120 answers over 2 days, seed 11."""
    out = tmp_path_factory.mktemp("small")
    generate(out, seed=11, answers=120, days=2)
    return out


@pytest.fixture(scope="module")
def truth(small: Path) -> dict:
    return json.loads((small / "ground_truth.json").read_text(encoding="utf-8"))


def answer_lines(root: Path, dates: list[str]):
    """Every physical line of every answers file: (relative file, 1-based line, text)."""
    for d in dates:
        for path in sorted((root / "answers" / d).glob("*.jsonl")):
            rel = path.relative_to(root).as_posix()
            with open(path, encoding="utf-8") as fh:
                for n, line in enumerate(fh, start=1):
                    yield rel, n, line.rstrip("\n")


def validate(text: str) -> tuple[dict | None, list[tuple[str | None, str]]]:
    """An independent line validator for the defects the generator claims to plant."""
    try:
        obj = json.loads(text)
    except ValueError:
        return None, [(None, "malformed_json")]
    defects: list[tuple[str | None, str]] = []
    for f in ("answer_id", "query_id", "query_text", "engine", "observed_at", "answer_text",
              "strata", "claims"):
        if f not in obj:
            defects.append((f, "missing_field"))
    ts = obj.get("observed_at")
    if isinstance(ts, str) and not TS.fullmatch(ts):
        defects.append(("observed_at", "invalid_timestamp"))
    text = obj.get("answer_text", "")
    for k, claim in enumerate(obj.get("claims") or []):
        for f in ("claim_id", "span", "text", "citations"):
            if f not in claim:
                defects.append((f"claims[{k}].{f}", "missing_field"))
        vw = claim.get("verification_worthy")
        if vw is not None and not isinstance(vw, bool):
            defects.append((f"claims[{k}].verification_worthy", "wrong_type"))
        start, end = claim.get("span", [0, 1])
        if not (0 <= start < end <= len(text)):
            defects.append((f"claims[{k}].span", "span_out_of_range"))
        for j, cit in enumerate(claim.get("citations") or []):
            if "citation_id" not in cit:
                defects.append((f"claims[{k}].citations[{j}].citation_id", "missing_field"))
    return obj, defects


def check_citations(answer: dict) -> list[tuple[int, str]]:
    """The fail-closed verification rule, written again: first failure per claim."""
    context = answer.get("context_chunk_ids")
    out = []
    for k, claim in enumerate(answer["claims"]):
        if not claim["citations"]:
            out.append((k, "missing_citation"))
            continue
        for cit in claim["citations"]:
            if context is not None or "tag" in cit:
                m = TAG.fullmatch(cit.get("tag") or "")
                if m is None:
                    out.append((k, "malformed_citation"))
                    break
                if m.group(2) not in context:
                    out.append((k, "hallucinated_citation"))
                    break
            elif not URL.fullmatch(cit.get("url", "")):
                out.append((k, "malformed_citation"))
                break
    return out


def accepted_answers(root: Path, truth: dict) -> dict[str, tuple[str, dict]]:
    """answer_id → (observation date, answer) for every line the truth says is accepted."""
    rejected = {(r["file"], r["line"]) for r in truth["rejected_inputs"]}
    out = {}
    for rel, n, text in answer_lines(root, truth["dates"]):
        if text.strip() and (rel, n) not in rejected:
            obj = json.loads(text)
            out[obj["answer_id"]] = (rel.split("/")[1], obj)
    return out


def canonical(url: str) -> str | None:
    """Enough URL canonicalisation to find a citation's capture (tracking, case, port, #)."""
    if not URL.fullmatch(url):
        return None
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if parts.port and parts.port not in (80, 443):
        host += f":{parts.port}"
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if not TRACKING.match(k)])
    return urlunsplit((parts.scheme.lower(), host, parts.path or "/", query, ""))


def capture_index(root: Path) -> dict[tuple[str, str], list[dict]]:
    """(crawl date, URL) → captures with status, Location and extracted text."""
    index: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for path in sorted((root / "warc").glob("*/*.warc.gz")):
        crawl_date = path.parent.name
        with open(path, "rb") as fh:
            for rec in ArchiveIterator(fh):
                if rec.rec_type not in ("response", "revisit"):
                    continue
                url = rec.rec_headers.get_header("WARC-Target-URI")
                status = int(rec.http_headers.get_statuscode())
                entry = {"status": status, "location": rec.http_headers.get_header("Location"),
                         "type": rec.rec_type, "text": None}
                if rec.rec_type == "response" and status == 200:
                    ctype = rec.http_headers.get_header("Content-Type") or ""
                    charset = ctype.split("charset=")[-1] if "charset=" in ctype else "utf-8"
                    body = rec.content_stream().read()
                    entry["text"] = extract_text(body.decode(charset, errors="replace"))
                index[(crawl_date, url)].append(entry)
    return index


def resolve(index: dict, crawl_date: str, url: str) -> dict | None:
    """Follow redirects through their own captures on one crawl date; the final capture."""
    for _ in range(5):
        caps = index.get((crawl_date, url))
        if not caps:
            return None
        cap = caps[-1]
        if cap["status"] in (301, 302) and cap["location"]:
            url = cap["location"]
            continue
        return cap
    return None


def norm(text: str) -> str:
    return " ".join(text.lower().split())


# ----------------------------------------------------------------------------------- tests
def test_same_arguments_give_identical_bytes(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    generate(a, seed=3, answers=40, days=2)
    generate(b, seed=3, answers=40, days=2)
    generate(c, seed=4, answers=40, days=2)
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert files_a == files_b
    for rel in files_a:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel
    assert (a / "ground_truth.json").read_bytes() != (c / "ground_truth.json").read_bytes()


def test_rerun_replaces_its_own_corpus_but_not_foreign_files(tmp_path: Path) -> None:
    generate(tmp_path, answers=40, days=2)
    generate(tmp_path, answers=40, days=1)  # replaces: no stale second day remains
    assert sorted(p.name for p in (tmp_path / "answers").iterdir()) == ["2026-11-01"]
    foreign = tmp_path / "other"
    (foreign / "answers").mkdir(parents=True)
    with pytest.raises(FileExistsError):
        generate(foreign, answers=40, days=1)


def test_layout(small: Path, truth: dict) -> None:
    assert truth["dates"] == ["2026-11-01", "2026-11-02"]
    assert truth["crawl_dates"] == ["2026-10-31", "2026-11-01", "2026-11-02", "2026-11-03"]
    assert truth["generator"] == {"seed": 11, "answers": 120, "days": 2,
                                  "start_date": "2026-11-01"}
    for d in truth["dates"]:
        assert sorted(p.stem for p in (small / "answers" / d).glob("*.jsonl")) == sorted(ENGINES)
        assert (small / "annotations" / "support" / f"{d}.csv").is_file()
        assert (small / "annotations" / "source_risk" / f"{d}.jsonl").is_file()
    for d in truth["crawl_dates"]:
        assert (small / "warc" / d / "crawl-0.warc.gz").is_file()
    assert {f["file"] for f in truth["warc"]["files"]} == {
        p.relative_to(small).as_posix() for p in (small / "warc").glob("*/*.warc.gz")}
    assert (small / "codebooks" / "v1.yaml").is_file() and (small / "codebooks" / "v2.yaml")
    text = (small / "ground_truth.json").read_text(encoding="utf-8")
    assert text == json.dumps(json.loads(text), sort_keys=True, indent=1,
                              ensure_ascii=False) + "\n"


def test_rejected_inputs_match_an_independent_validator(small: Path, truth: dict) -> None:
    found, seen, blanks = [], set(), 0
    for rel, n, text in answer_lines(small, truth["dates"]):
        if not text.strip():
            blanks += 1
            continue
        obj, defects = validate(text)
        if obj is not None and "answer_id" in obj:
            if obj["answer_id"] in seen:
                defects.append(("answer_id", "duplicate_id"))
            seen.add(obj["answer_id"])
        assert len(defects) <= 1, (rel, n, defects)  # exactly one defect per bad line
        found += [{"file": rel, "line": n, "field": f, "reason": r} for f, r in defects]
    assert found == truth["rejected_inputs"]
    assert blanks >= 1
    assert {r["reason"] for r in found} == {
        "malformed_json", "missing_field", "wrong_type", "span_out_of_range",
        "invalid_timestamp", "duplicate_id"}
    assert truth["counts"]["rejected_lines"] == len(found)
    assert truth["counts"]["answer_lines"] == truth["counts"]["accepted_answers"] + len(found)


def test_accepted_answers_are_well_formed(small: Path, truth: dict) -> None:
    answers = accepted_answers(small, truth)
    claim_ids, citation_ids = set(), set()
    for observation_date, a in answers.values():
        assert a["observed_at"].startswith(observation_date)
        assert a["engine"] in ENGINES
        assert ("context_chunk_ids" in a) == (a["engine"] == "inhouse_rag")
        assert a["strata"]["domain"] in ("health", "finance", "legal", "consumer_products",
                                         "technology", "news")
        assert a["strata"]["risk_band"] in ("low", "medium", "high")
        assert 0 < a["strata"]["inclusion_prob"] <= 1
        if "cost" in a:
            assert set(a["cost"]) == {"input_tokens", "output_tokens"}
        for claim in a["claims"]:
            start, end = claim["span"]
            assert a["answer_text"][start:end] == claim["text"]
            assert claim["verification_worthy"] in (True, False, None)
            assert claim["claim_id"] not in claim_ids
            claim_ids.add(claim["claim_id"])
            for cit in claim["citations"]:
                assert cit["citation_id"] not in citation_ids
                citation_ids.add(cit["citation_id"])
                assert cit["source_type"] in ("web_page", "news", "scholarly", "forum", "vendor",
                                              "kb_doc")
                if "retrieved_at" in cit:
                    assert TS.fullmatch(cit["retrieved_at"])
                if "chunk_offset" in cit:
                    assert 0 <= cit["chunk_offset"][0] < cit["chunk_offset"][1]
                if cit["source_type"] == "scholarly":
                    assert isinstance(cit["year"], int) and cit["authors"] and cit["title"]
    assert truth["counts"]["claims"] == len(claim_ids)
    assert truth["counts"]["citations"] == len(citation_ids)
    assert truth["counts"]["zero_claim_answers"] == sum(
        not a["claims"] for _, a in answers.values()) > 0


def test_claim_failures_and_verdicts_follow_the_fail_closed_rule(small: Path, truth: dict) -> None:
    answers = accepted_answers(small, truth)
    failures, verdicts = [], []
    served = Counter()
    for aid in sorted(answers):
        a = answers[aid][1]
        fails = check_citations(a)
        failures += [{"answer_id": aid, "claim_id": a["claims"][k]["claim_id"],
                      "claim_index": k, "reason": r} for k, r in fails]
        verdicts.append({"answer_id": aid, "verified": not fails,
                         "reason": fails[0][1] if fails else None,
                         "claim_index": fails[0][0] if fails else None})
        cost = a.get("cost", {})
        served["input_tokens_all"] += cost.get("input_tokens", 0)
        served["output_tokens_all"] += cost.get("output_tokens", 0)
        if not fails:
            served["verified_answers"] += 1
            served["input_tokens_served"] += cost.get("input_tokens", 0)
            served["output_tokens_served"] += cost.get("output_tokens", 0)
    assert failures == truth["claim_failures"]
    assert verdicts == truth["answer_verdicts"]
    assert {f["reason"] for f in failures} == {"missing_citation", "malformed_citation",
                                                "hallucinated_citation"}
    for key, value in served.items():
        assert truth["counts"][key] == value, key
    assert truth["counts"]["rejected_answers"] == len(answers) - served["verified_answers"]


def test_warcs_are_readable_and_counted(small: Path, truth: dict) -> None:
    statuses: Counter = Counter()
    payload_digest: dict[str, tuple[str, str, str]] = {}
    revisits = []
    truncated = []
    record_ids: set[str] = set()
    for entry in truth["warc"]["files"]:
        counts: Counter = Counter()
        last = None
        with open(small / entry["file"], "rb") as fh:
            for rec in ArchiveIterator(fh):
                counts[rec.rec_type] += 1
                last = rec.rec_type
                h = rec.rec_headers
                assert h.get_header("WARC-Record-ID") not in record_ids
                record_ids.add(h.get_header("WARC-Record-ID"))
                if rec.rec_type == "response":
                    statuses[rec.http_headers.get_statuscode()] += 1
                    declared = int(h.get_header("Content-Length"))
                    payload = rec.raw_stream.read()
                    stored = len(rec.http_headers.to_bytes()) + len(payload)
                    url = h.get_header("WARC-Target-URI")
                    if stored < declared:
                        truncated.append({"file": entry["file"], "url": url,
                                          "kind": "short_block"})
                        continue
                    if h.get_header("WARC-Truncated"):
                        truncated.append({"file": entry["file"], "url": url,
                                          "kind": "warc_truncated"})
                    digest = "sha1:" + base64.b32encode(hashlib.sha1(payload).digest()).decode()
                    assert digest == h.get_header("WARC-Payload-Digest")
                    payload_digest[h.get_header("WARC-Record-ID")] = (
                        url, h.get_header("WARC-Date"), digest)
                elif rec.rec_type == "revisit":
                    revisits.append(h)
                elif rec.rec_type == "request":
                    assert h.get_header("WARC-Concurrent-To")
        assert dict(counts) == {k: v for k, v in entry["records"].items() if v}, entry["file"]
        if any(t["file"] == entry["file"] and t["kind"] == "short_block" for t in truncated):
            assert last == "response"  # the crawler died writing the file's last record
    assert dict(sorted(statuses.items())) == truth["warc"]["status_counts"]
    assert sorted(truncated, key=lambda t: (t["file"], t["url"])) == truth["warc"]["truncated"]
    assert [t["kind"] for t in truncated].count("short_block") == 1
    assert revisits
    for h in revisits:
        url, when, digest = payload_digest[h.get_header("WARC-Refers-To")]
        assert h.get_header("WARC-Refers-To-Target-URI") == url
        assert h.get_header("WARC-Refers-To-Date") == when
        assert h.get_header("WARC-Payload-Digest") == digest
        assert h.get_header("WARC-Profile").endswith("identical-payload-digest")
    for code in ("200", "404"):
        assert truth["warc"]["status_counts"].get(code, 0) > 0
    assert truth["warc"]["status_counts"].get("301", 0) + \
        truth["warc"]["status_counts"].get("302", 0) > 0


def test_cited_quotes_are_found_in_the_archived_pages(small: Path, truth: dict) -> None:
    index = capture_index(small)
    broken = {t["url"] for t in truth["warc"]["truncated"]}
    answers = accepted_answers(small, truth)
    checked = verbatim = 0
    for observation_date, a in answers.values():
        for claim in a["claims"]:
            for cit in claim["citations"]:
                if "quote" not in cit or "chunk_offset" not in cit:
                    continue
                url = canonical(cit["url"])
                cap = resolve(index, observation_date, url) if url else None
                if cap is None or cap["status"] != 200 or url in broken or cap["text"] is None:
                    continue
                start, end = cit["chunk_offset"]
                chunk = cap["text"][start:end]
                assert norm(cit["quote"]) in norm(chunk), (a["answer_id"], cit["citation_id"])
                checked += 1
                verbatim += cit["quote"] in chunk
    assert checked >= 50
    assert verbatim / checked > 0.8


def test_support_annotations(small: Path, truth: dict) -> None:
    v1 = yaml.safe_load((small / "codebooks" / "v1.yaml").read_text(encoding="utf-8"))
    labels = set(v1["label_maps"]["demo_support"])
    rows = []
    for d in truth["dates"]:
        with open(small / "annotations" / "support" / f"{d}.csv", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            assert reader.fieldnames == ["claim_id", "citation_id", "annotator_id", "label",
                                         "evidence_span", "annotated_at", "codebook_version",
                                         "grader"]
            rows += list(reader)
    assert len(rows) == truth["support"]["rows"] > 0
    items: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in rows:
        assert r["label"] in labels
        assert TS.fullmatch(r["annotated_at"]) and r["codebook_version"] == "v1"
        assert re.fullmatch(r"(\d+:\d+)?", r["evidence_span"])
        items[(r["claim_id"], r["citation_id"])].append(r)
    disagreements = 0
    for group in items.values():
        humans = [r for r in group if r["grader"] == "human"]
        graders = [r for r in group if r["grader"] != "human"]
        assert 2 <= len(humans) <= 3 and len({r["annotator_id"] for r in humans}) == len(humans)
        assert all(r["annotator_id"] == r["grader"] for r in graders)
        disagreements += len({r["label"] for r in humans}) > 1
    assert disagreements == truth["support"]["items_with_disagreement"]
    assert 0.08 < disagreements / len(items) < 0.3


def test_source_risk_records(small: Path, truth: dict) -> None:
    answers = accepted_answers(small, truth)
    index = capture_index(small)
    v1 = yaml.safe_load((small / "codebooks" / "v1.yaml").read_text(encoding="utf-8"))
    records, digests = [], set()
    planted = {(p["file"], p["line"]) for p in truth["source_risk"]["planted_defects"]}
    for d in truth["dates"]:
        for n, line in enumerate((small / "annotations" / "source_risk" / f"{d}.jsonl")
                                 .read_text(encoding="utf-8").splitlines(), 1):
            if (f"{d}.jsonl", n) in planted:
                continue  # planted malformed records: tests/source_risk/test_source_risk_demo.py
            rec = json.loads(line)
            records.append((d, rec))
            digests.add(hashlib.sha256(json.dumps(
                rec, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
            ).hexdigest())
    assert len(records) == truth["source_risk"]["rows"] > 0
    nulls = 0
    for d, rec in records:
        assert rec["source_role"] in v1["source_roles"]
        assert set(rec["predicates"]) == {"I", "A", "M", "D"}
        assert set(rec["dimensions"]) == set(v1["priority_weights"])
        assert all(0 <= v <= 1 for v in rec["dimensions"].values())
        nulls += None in rec["predicates"].values()
        assert rec["parent_record"] is None or rec["parent_record"] in digests
        for pred, value in rec["predicates"].items():
            assert value in (0, 1, None)
            assert (pred in rec["evidence"]) == (value is not None)
        answer = answers[rec["answer_id"]][1]
        for ev in rec["evidence"].values():
            if ev["snapshot"] == "answer":
                assert answer["answer_text"][ev["start"]:ev["end"]] == ev["quote"]
            else:
                cap = resolve(index, d, canonical(rec["source_url"]))
                if cap is not None and cap["text"] is not None:
                    assert cap["text"][ev["start"]:ev["end"]] == ev["quote"]
    assert nulls == truth["source_risk"]["null_predicate_rows"]


def test_codebooks(small: Path) -> None:
    v1 = yaml.safe_load((small / "codebooks" / "v1.yaml").read_text(encoding="utf-8"))
    v2 = yaml.safe_load((small / "codebooks" / "v2.yaml").read_text(encoding="utf-8"))
    five = {"fully_supported", "partially_supported", "unsupported", "contradicted", "unresolved"}
    for cb, version in ((v1, "v1"), (v2, "v2")):
        assert cb["version"] == version
        assert set(cb["label_maps"]["demo_support"].values()) <= five
        assert math.isclose(sum(cb["priority_weights"].values()), 1.0)
        assert cb["alignment_window"] == {"before_days": 7, "after_days": 1}
        assert cb["high_risk_domains"] == ["health", "finance", "legal"]
        assert cb["policy"]["review_unresolved"] is True
        assert "utm_*" in cb["tracking_params"] and "fbclid" in cb["tracking_params"]
        assert {"citation_recall", "citation_precision"} <= set(cb["metrics"])
    assert v1["label_maps"]["demo_support"]["partial"] == "partially_supported"
    assert v2["label_maps"]["demo_support"]["partial"] == "unsupported"


def test_page_text_is_what_the_reference_extractor_recovers() -> None:
    world = World.for_params(Params(answers=200))
    for g in range(0, world.scale.n_web, 37):
        src = web_source(world, g)
        for version in (0, 1):
            html = web_page_html(world, src, version).decode(src.charset)
            page = web_page_text(world, src, version)
            assert extract_text(html) == page.text
            for sentence, paragraph in page.facts.values():
                assert paragraph[0] <= sentence[0] < sentence[1] <= paragraph[1]
    doc = kb_doc(world, 5)
    from citeaudit.demo_corpus.pages import kb_page_html, kb_page_text

    assert extract_text(kb_page_html(world, doc, 0).decode()) == kb_page_text(world, doc, 0).text


def test_cli_small_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="citeaudit")
    register_cli(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["demo-corpus", "--out", str(tmp_path), "--answers", "40",
                              "--days", "2", "--start-date", "2026-12-30", "--no-progress",
                              "--json"])
    assert args.func(args) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["answers"] == 40 and summary["warc_records"] > 0
    truth = json.loads((tmp_path / "ground_truth.json").read_text(encoding="utf-8"))
    assert truth["dates"] == ["2026-12-30", "2026-12-31"]
    assert truth["crawl_dates"][-1] == "2027-01-01"
    args = parser.parse_args(["demo-corpus", "--out", str(tmp_path), "--answers", "40",
                              "--days", "2", "--start-date", "2026-12-30", "--no-progress"])
    assert args.func(args) == 0
    assert "ground_truth.json" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        parser.parse_args(["demo-corpus", "--help"])
    assert exc.value.code == 0
    assert "ground_truth.json" in capsys.readouterr().out


def test_default_corpus_is_plausible(tmp_path: Path) -> None:
    summary = generate(tmp_path)
    truth = json.loads((tmp_path / "ground_truth.json").read_text(encoding="utf-8"))
    counts = truth["counts"]
    assert truth["dates"] == ["2026-11-01", "2026-11-02", "2026-11-03"]
    assert summary["answers"] == 600 and counts["answer_lines"] >= 600
    assert 0.02 < counts["rejected_lines"] / counts["answer_lines"] < 0.08
    assert 0.65 < counts["verified_answers"] / counts["accepted_answers"] < 0.9
    observed = {datetime.strptime(v, "%Y-%m-%d").date() for v in truth["dates"]}
    assert min(observed) == date(2026, 11, 1)
    assert len(truth["warc"]["truncated"]) == 3  # 2 from the crawl + 1 planted alignment case
