"""`citeaudit import openai|gemini|anthropic|perplexity` on every recorded response in
../shared/corpora/answers/engines, checked against the responses' own fields: Gemini claims
equal their segment text, OpenAI claims end right before the link, Anthropic quotes are the
cited_text, Perplexity cites exactly the marked sources; bad input becomes rejected_inputs rows;
then `citeaudit run` over the imported day."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from citeaudit import cli
from citeaudit.imports import engines
from citeaudit.imports.engine_text import byte_to_char, sentences

DAY = "2026-11-30"
WHEN = f"{DAY}T12:00:00Z"
FOLDERS = {"openai-responses": "openai", "openai-chat-search": "openai", "gemini": "gemini",
           "anthropic": "anthropic", "perplexity": "perplexity"}
# pydantic-ai's recorder turned ’ into ' in this file, so its last two segments are 2 bytes off
NORMALISED = "pydantic-ai__thinking-native-tool-gemini-3-flash.json"


@pytest.fixture(scope="module")
def fixtures(corpora: Path) -> dict[str, list[Path]]:
    root = corpora / "answers" / "engines"
    if not root.is_dir():
        pytest.skip(f"{root} is absent")
    out: dict[str, list[Path]] = {}
    for folder, fmt in FOLDERS.items():
        out.setdefault(fmt, []).extend(sorted((root / folder).glob("*.json")))
    return out


@pytest.fixture(scope="module")
def imported(fixtures, tmp_path_factory) -> Path:
    raw = tmp_path_factory.mktemp("raw")
    for fmt, paths in fixtures.items():
        argv = ["import", fmt, *map(str, paths), "--out", str(raw), "--observed-at", WHEN]
        assert cli.main(argv) == 0
    return raw


def answer_of(raw: Path, fmt: str, path: Path) -> dict:
    [file] = (raw / "answers" / DAY).glob(f"{fmt}-{path.stem}-*.jsonl")
    [line] = file.read_text(encoding="utf-8").splitlines()
    return json.loads(line)


def cites(answer: dict) -> list[tuple[dict, dict]]:
    return [(cl, c) for cl in answer["claims"] for c in cl["citations"]]


def test_byte_offsets_convert_to_code_points() -> None:
    text = "69°F — ok"
    b = [len(text[:i].encode("utf-8")) for i in range(len(text) + 1)]
    assert byte_to_char(text, b) == list(range(len(text) + 1))
    assert byte_to_char(text, [3]) == [None]  # inside the two bytes of °
    assert byte_to_char(text, [b[-1] + 1]) == [None]


def test_sentences_keep_abbreviations_together() -> None:
    text = "Sales rose in the U.S. market. St. Louis grew 3.5% today!\n- Next item"
    assert [text[a:b] for a, b in sentences(text)] == [
        "Sales rose in the U.S. market.", "St. Louis grew 3.5% today!", "- Next item"]


def test_every_claim_is_its_span_and_raw_kept_verbatim(fixtures, imported) -> None:
    for fmt, paths in fixtures.items():
        for path in paths:
            if path.name == NORMALISED:
                continue
            a = answer_of(imported, fmt, path)
            assert a["observed_at"] == WHEN and a["engine"] == fmt and a["model"]
            for cl in a["claims"]:
                s, e = cl["span"]
                assert cl["text"] == a["answer_text"][s:e] and cl["text"].strip() == cl["text"]
                assert cl["verification_worthy"] is None
            kept = imported / a["import"]["file"]
            assert kept.read_bytes() == path.read_bytes()


def test_openai_claims_end_right_before_the_link(fixtures, imported) -> None:
    for path in fixtures["openai"]:
        obj = json.loads(path.read_text(encoding="utf-8"))
        if "output" in obj:
            parts = [p for o in obj["output"] if o["type"] == "message" for p in o["content"]
                     if p["type"] == "output_text"]
            anns = [(x["start_index"], x["url"]) for p in parts for x in p["annotations"]]
        else:
            anns = [(x["url_citation"]["start_index"], x["url_citation"]["url"])
                    for x in obj["choices"][0]["message"]["annotations"]]
        a = answer_of(imported, "openai", path)
        got = cites(a)
        assert [c["url"] for _, c in got] == [u for _, u in anns]
        text = a["answer_text"]
        for (start, _), (cl, _) in zip(anns, got, strict=True):
            between = text[cl["span"][1]:start]
            assert cl["span"][1] <= start and re.fullmatch(r"[\s\]\)]*", between), between
            assert "](http" not in cl["text"]


def test_gemini_claims_are_the_segments(fixtures, imported) -> None:
    seen_non_ascii = False
    for path in fixtures["gemini"]:
        if path.name == NORMALISED:
            continue
        obj = json.loads(path.read_text(encoding="utf-8"))
        gm = obj["candidates"][0]["groundingMetadata"]
        a = answer_of(imported, "gemini", path)
        by_text = {cl["text"]: cl for cl in a["claims"]}
        for sup in gm["groundingSupports"]:
            cl = by_text[sup["segment"]["text"].strip()]
            urls = [gm["groundingChunks"][i]["web"]["uri"] for i in sup["groundingChunkIndices"]]
            assert urls == [c["url"] for c in cl["citations"]][:len(urls)]
            assert all(c["title"] for c in cl["citations"])
            seen_non_ascii |= any(ord(ch) > 127 for ch in a["answer_text"][:cl["span"][0]])
    assert seen_non_ascii  # a segment after a multi-byte character (69°F) lands right


def test_gemini_segment_mismatch_is_rejected_with_reasons(fixtures, imported) -> None:
    [path] = [p for p in fixtures["gemini"] if p.name == NORMALISED]
    assert not list((imported / "answers" / DAY).glob(f"gemini-{path.stem}-*"))
    [rej] = (imported / "import_rejections" / DAY).glob(f"gemini-{path.stem}-*.jsonl")
    rows = [json.loads(x) for x in rej.read_text(encoding="utf-8").splitlines()]
    assert [(r["field"].rsplit("groundingSupports", 1)[1], r["reason"]) for r in rows] == [
        ("[7].segment.text", "span_text_mismatch"), ("[8].segment", "span_out_of_range")]
    assert all(r["file"].startswith("responses/gemini/") for r in rows)


def test_anthropic_quotes_are_the_cited_text(fixtures, imported) -> None:
    for path in fixtures["anthropic"]:
        obj = json.loads(path.read_text(encoding="utf-8"))
        cited = [(b["text"].strip(), c) for b in obj["content"] if b["type"] == "text"
                 for c in b.get("citations") or []]
        got = cites(answer_of(imported, "anthropic", path))
        assert len(got) == len(cited)
        for (block, src), (cl, c) in zip(cited, got, strict=True):
            assert cl["text"] == block and c["url"] == src["url"]
            if c.get("quote_truncated"):
                assert len(src["cited_text"]) == 153 and c["quote"] + "..." == src["cited_text"]
            else:
                assert c["quote"] == src["cited_text"]


def test_perplexity_cites_exactly_the_marked_sources(fixtures, imported) -> None:
    for path in fixtures["perplexity"]:
        obj = json.loads(path.read_text(encoding="utf-8"))
        text = obj["choices"][0]["message"]["content"]
        marked = [obj["citations"][int(n) - 1] for n in re.findall(r"\[(\d+)\]", text)]
        a = answer_of(imported, "perplexity", path)
        assert Counter(c["url"] for _, c in cites(a)) == Counter(marked)
        assert {r["url"] for r in a["retrieved_not_cited"]} == set(obj["citations"]) - set(marked)
        assert not any(re.search(r"\[\d+\]", cl["text"]) for cl in a["claims"])


def test_a_second_import_gives_the_same_bytes(fixtures, imported, tmp_path) -> None:
    again = tmp_path / "again"
    for fmt, paths in fixtures.items():
        engines.import_paths(fmt, paths, again, observed_at=WHEN)
    for folder in ("answers", "responses", "import_rejections", "codebooks"):
        first = {p.relative_to(imported): p.read_bytes()
                 for p in (imported / folder).rglob("*") if p.is_file()}
        second = {p.relative_to(again): p.read_bytes()
                  for p in (again / folder).rglob("*") if p.is_file()}
        assert first == second, folder


def test_bad_responses_become_rejections_and_the_batch_goes_on(fixtures, tmp_path) -> None:
    good = next(p for p in fixtures["perplexity"] if "search-result" in p.name)
    obj = json.loads(good.read_text(encoding="utf-8"))
    bad_marker = dict(obj, choices=[{"message": {"content": "Ruby is fun.[9]"}}])
    bad_span = {"object": "chat.completion", "created": 1, "choices": [{"message": {
        "content": "Short.", "annotations": [{"type": "url_citation", "url_citation": {
            "start_index": 3, "end_index": 99, "url": "https://x.org/"}}]}}]}
    files = {"truncated.json": good.read_text(encoding="utf-8")[:500],
             "shape.json": json.dumps({"hello": 1}),
             "batch.jsonl": json.dumps(bad_marker) + "\n" + json.dumps(obj) + "\n"}
    for name, body in files.items():
        (tmp_path / name).write_text(body, encoding="utf-8")
    out = tmp_path / "raw"
    res = engines.import_paths("perplexity", [tmp_path / n for n in files], out,
                               observed_at=WHEN)
    assert [(r["answers"], r["rejections"]) for r in res] == [(0, 1), (0, 1), (1, 1)]
    (tmp_path / "span.json").write_text(json.dumps(bad_span), encoding="utf-8")
    [r] = engines.import_paths("openai", [tmp_path / "span.json"], out)
    assert (r["answers"], r["rejections"]) == (0, 1)
    rows = [json.loads(x) for f in sorted((out / "import_rejections").rglob("*.jsonl"))
            for x in f.read_text(encoding="utf-8").splitlines()]
    assert sorted((r["reason"], r["line"]) for r in rows) == [
        ("citation_index_out_of_range", 1), ("malformed_json", 1),
        ("span_out_of_range", 1), ("unknown_shape", 1)]
    assert len(list((out / "answers" / DAY).glob("*.jsonl"))) == 1


def test_run_over_the_imported_day(imported, fixtures, tmp_path_factory) -> None:
    imported = Path(shutil.copytree(imported, tmp_path_factory.mktemp("run") / "raw"))
    # a day whose only response is bad still reaches rejected_inputs
    good = next(p for p in fixtures["perplexity"] if "search-result" in p.name)
    obj = json.loads(good.read_text(encoding="utf-8"))
    bad = tmp_path_factory.mktemp("bad") / "nine.json"
    bad.write_text(json.dumps(dict(obj, choices=[{"message": {"content": "Fun.[9]"}}])),
                   encoding="utf-8")
    assert cli.main(["import", "perplexity", str(bad), "--out", str(imported),
                     "--observed-at", "2026-11-29T08:00:00Z"]) == 0
    derived = tmp_path_factory.mktemp("derived")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DAGSTER_HOME", str(tmp_path_factory.mktemp("home")))
        mp.setenv("CITEAUDIT_CROSSREF_URL", "offline")
        mp.setenv("CITEAUDIT_OPENALEX_URL", "offline")
        assert cli.main(["run", "--raw", str(imported), "--derived", str(derived),
                         "--quiet"]) == 0
    expected = [json.loads(x) for f in sorted((imported / "answers" / DAY).glob("*.jsonl"))
                for x in f.read_text(encoding="utf-8").splitlines()]
    con = duckdb.connect(str(derived / "catalog.duckdb"), read_only=True)
    try:
        answers = con.sql("SELECT count(*) FROM answers").fetchall()[0][0]
        claims = con.sql("SELECT count(*) FROM claims").fetchall()[0][0]
        citations = con.sql("SELECT count(*) FROM citations").fetchall()[0][0]
        quotes = con.sql("SELECT count(*) FROM passage_checks").fetchall()[0][0]
        rejected = con.sql("SELECT observation_date::VARCHAR, source, reason, count(*) "
                           "FROM rejected_inputs GROUP BY ALL ORDER BY ALL").fetchall()
        checked = con.sql("SELECT count(*) FROM answer_checks").fetchall()[0][0]
        verdicts = dict(con.sql("SELECT verdict, count(*) FROM answer_checks "
                                "GROUP BY ALL").fetchall())
        rejected_why = {r for (r,) in con.sql("SELECT reason FROM answer_checks "
                                               "WHERE verdict = 'rejected'").fetchall()}
        uncited = con.sql("SELECT verdict, reason, count(*) FROM claim_checks "
                          "WHERE n_citations = 0 GROUP BY ALL").fetchall()
        cov = con.sql("SELECT denominator, unresolved FROM metrics WHERE observation_date = "
                      f"'{DAY}' AND metric = 'verification_coverage' AND margin = 'overall'"
                      ).fetchall()
        n_claims_day = con.sql("SELECT count(*) FROM claims WHERE observation_date = "
                               f"'{DAY}'").fetchall()[0][0]
    finally:
        con.close()
    n_files = sum(len(v) for v in fixtures.values())
    assert answers == len(expected) == n_files - 1 == checked
    assert claims == sum(len(a["claims"]) for a in expected)
    assert citations == sum(len(cl["citations"]) for a in expected for cl in a["claims"])
    assert quotes == sum(1 for a in expected for _, c in cites(a) if c.get("quote"))
    assert rejected == [("2026-11-29", "import:perplexity", "citation_index_out_of_range", 1),
                        (DAY, "import:gemini", "span_out_of_range", 1),
                        (DAY, "import:gemini", "span_text_mismatch", 1)]

    # an engine answer's uncited sentence nobody judged is not a failure of the fail-closed
    # gate: unresolved, never a rejection (every imported claim has unknown worthiness)
    assert uncited and all(v == "unresolved" and r == "worthiness_unknown"
                           for v, r, _ in uncited), uncited
    assert verdicts.get("unresolved", 0) > 0
    assert verdicts.get("rejected", 0) < verdicts["unresolved"], verdicts
    assert rejected_why <= {"malformed_citation"}, rejected_why  # a URL with spaces: real
    # the headline shows coverage with its unresolved count, not "rejected 100%"
    assert cov == [(0, n_claims_day)]
    [page] = (derived / "report" / f"observation_date={DAY}").glob("codebook=*/index.html")
    html = page.read_text(encoding="utf-8")
    head = html[html.index('id="headline"'):html.index('id="papers"')]
    assert f"no rate (n=0, u={n_claims_day})" in head  # coverage, all engines
    overall = head[head.index("<th>all engines</th>"):]
    assert "100.0%" not in overall[:overall.index("</tr>")]


def test_reimport_replaces_the_earlier_rows_whatever_the_options(tmp_path) -> None:
    """The same response imported again replaces what the earlier import wrote, keyed by its
    bytes: without a creation time it is first rejected (missing created_at); with
    --observed-at it becomes an answer and the stale rejection goes; another --observed-at and
    --engine move it, never copy it; an emptied date folder goes too."""
    body = {"object": "chat.completion", "model": "gpt-4o-search-preview", "choices": [
        {"message": {"role": "assistant", "content": "Rates rose in May. (x.org)",
                     "annotations": [{"type": "url_citation", "url_citation": {
                         "start_index": 19, "end_index": 26, "url": "https://x.org/a"}}]}}]}
    src = tmp_path / "resp.json"
    src.write_text(json.dumps(body), encoding="utf-8")
    out = tmp_path / "raw"

    def files(folder: str) -> list[str]:
        return sorted(p.relative_to(out).as_posix() for p in (out / folder).rglob("*.jsonl"))

    [first] = engines.import_paths("openai", [src], out)
    assert (first["answers"], first["rejections"]) == (0, 1)
    [stale] = files("import_rejections")
    stale_day = stale.split("/")[1]
    [second] = engines.import_paths("openai", [src], out, observed_at=WHEN)
    assert second["answers"] == 1 and second["replaced"] == [stale, *[
        r for r in second["replaced"] if r.startswith("responses/")]]
    assert files("import_rejections") == []
    assert not [p for p in (out / "import_rejections").glob("*") if p.is_dir()]
    assert [p.name for p in (out / "answers").iterdir()] == [DAY]
    assert not (out / "answers" / stale_day).exists() or stale_day == DAY
    [answer_file] = files("answers")
    [third] = engines.import_paths("openai", [src], out, engine="chatgpt",
                                   observed_at="2026-11-29T08:00:00Z")
    assert answer_file in third["replaced"]
    [moved] = files("answers")
    assert moved.startswith("answers/2026-11-29/")
    [line] = (out / moved).read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["engine"] == "chatgpt"
    assert sorted(p.parent.name for p in (out / "responses" / "openai").rglob("*.json")) == [
        "2026-11-29"]
