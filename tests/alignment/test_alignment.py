"""Alignment, L1 existence and L2 passages: canonicalization properties, every planted
demo case classified exactly as planted through real Dagster runs, real-WARC payload text."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit.alignment import align, payload_text
from citeaudit.alignment.canonical import canonicalize
from citeaudit.archive.index import index_paths
from citeaudit.codebook import AlignmentWindow
from citeaudit.demo_corpus.codebooks import TRACKING_PARAMS

GLOBS = tuple(TRACKING_PARAMS)


def is_tracking(name: str) -> bool:
    import fnmatch

    return any(fnmatch.fnmatchcase(name.lower(), g.lower()) for g in GLOBS)


# ------------------------------------------------------------------------- canonicalization
hosts = st.from_regex(r"[a-z][a-z0-9-]{0,12}(\.[a-z][a-z0-9-]{0,8}){1,2}", fullmatch=True)
segments = st.lists(st.from_regex(r"[A-Za-z0-9._~-]{1,8}", fullmatch=True), max_size=4)
params = st.lists(st.tuples(st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True),
                            st.from_regex(r"[A-Za-z0-9]{0,6}", fullmatch=True)), max_size=4)
tracking = st.lists(st.tuples(st.sampled_from(["utm_source", "utm_medium", "utm_campaign",
                                               "fbclid", "gclid", "mc_eid"]),
                              st.from_regex(r"[A-Za-z0-9]{1,8}", fullmatch=True)), max_size=3)


def build(scheme: str, host: str, path: list[str], query: list[tuple[str, str]],
          port: str = "", frag: str = "") -> str:
    url = f"{scheme}://{host}{port}/" + "/".join(path)
    if query:
        url += "?" + "&".join(f"{k}={v}" for k, v in query)
    return url + frag


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["http", "https", "HTTPS"]), hosts, segments, params, tracking,
       st.booleans(), st.sampled_from(["", "#top", "#:~:text=a%20b"]))
def test_canonicalization_is_idempotent_and_ignores_tracking(scheme, host, path, query, track,
                                                            upper, frag) -> None:
    plain = build(scheme.lower(), host, path, [q for q in query if not is_tracking(q[0])])
    noisy_host = host.upper() if upper else host
    default_port = ":443" if scheme.lower() == "https" else ":80"
    noisy = build(scheme, noisy_host, path, query + track, default_port, frag)
    a, b = canonicalize(plain, is_tracking), canonicalize(noisy, is_tracking)
    assert a.key is not None and a.key == b.key
    again = canonicalize(b.url, is_tracking)
    assert again.url == b.url and again.key == b.key


@settings(max_examples=60, deadline=None)
@given(hosts, segments, params)
def test_key_equals_pywb_surt_without_tracking(host, path, query) -> None:
    import surt

    url = build("https", host, path, [q for q in query if not is_tracking(q[0])])
    assert canonicalize(url, is_tracking).key == surt.surt(url)


@pytest.mark.parametrize("url, reason", [
    (None, "no_url"), ("", "no_url"), ("ftp://example.com/a", "invalid_url"),
    ("https:///nohost", "invalid_url"), ("https://exa mple.com/a b", "invalid_url"),
    ("<https://example.com/a>", "invalid_url"), ("https://example.com:99999/", "invalid_url"),
])
def test_unusable_cited_urls_get_a_reason(url, reason) -> None:
    c = canonicalize(url, is_tracking, strict=True)
    assert c.key is None and c.error == reason


def test_capture_uris_are_repaired_like_pywb() -> None:
    a = canonicalize("<https://example.com/a b>", is_tracking)
    assert a.key == canonicalize("https://example.com/a%20b", is_tracking).key


# ------------------------------------------------------------------------- planted cases
@pytest.fixture(scope="module")
def demo(demo_run) -> tuple[Path, Path, dict]:
    """The shared demo run (conftest): a generated corpus through `citeaudit run`."""
    return demo_run.raw, demo_run.derived, demo_run.truth


def _rows(derived: Path, asset: str, depth: int = 2) -> list[dict]:
    glob = str(derived / asset / ("*/" * depth) / "data.parquet").replace("//", "/")
    return duckdb.sql(f"SELECT * FROM read_parquet('{glob}', hive_partitioning = true)"
                      ).to_arrow_table().to_pylist()


def test_every_planted_case_is_classified_as_planted(demo) -> None:
    _, derived, truth = demo
    cases = truth["alignment_cases"]
    assert len(cases) >= 25
    existence = {(r["codebook"], r["citation_id"]): r for r in _rows(derived,
                                                                       "citation_existence")}
    passages = {(r["codebook"], r["citation_id"]): r for r in _rows(derived, "passage_checks")}
    for version in ("v1", "v2"):
        for case in cases:
            got = existence[(version, case["citation_id"])]
            assert (got["verdict"], got["reason"]) == (case["verdict"], case["reason"]), case
            p = passages.get((version, case["citation_id"]))
            assert (p["verdict"] if p else None) == case["passage"], case


def test_planted_alignment_details(demo) -> None:
    _, derived, truth = demo
    rows = {r["citation_id"]: r for r in _rows(derived, "citation_captures")
            if r["codebook"] == "v1"}
    by_case = {c["case"]: rows[c["citation_id"]] for c in truth["alignment_cases"]}
    assert by_case["window_edge_before"]["drift_seconds"] == -7 * 86400
    assert by_case["window_edge_after"]["drift_seconds"] == 86400
    assert by_case["redirect_chain"]["hops"] == 2
    assert by_case["redirect_chain"]["final_uri"].endswith("/chain-c")
    assert by_case["revisit_same_uri"]["revisit_match"] == "refers_to"
    agnostic = by_case["revisit_url_agnostic"]
    assert agnostic["revisit_match"] == "refers_to"
    assert agnostic["payload_file"] != agnostic["final_file"] or \
        agnostic["payload_offset"] != agnostic["final_offset"]
    assert by_case["observed_at_reference"]["reference_source"] == "observed_at"
    assert by_case["in_window"]["reference_source"] == "retrieved_at"
    assert by_case["same_second"]["final_status"] == 200


def test_unknown_is_never_pass_or_dead_and_every_citation_has_one_row(demo) -> None:
    _, derived, truth = demo
    citations = _rows(derived, "citations", depth=1)
    existence = _rows(derived, "citation_existence")
    for version in ("v1", "v2"):
        ids = sorted(r["citation_id"] for r in existence if r["codebook"] == version)
        assert ids == sorted(r["citation_id"] for r in citations)
    for r in existence:
        assert r["verdict"] in ("pass", "dead", "changed", "unresolved") and r["reason"]
        if r["verdict"] == "pass":
            assert 200 <= r["final_status"] < 300 and r["reason"] == "ok"
    planted_plans = truth["planted"]["warc"]
    assert planted_plans.get("truncated_records", 0) >= 1


def test_crawl_plans_of_the_random_corpus_agree_with_l1(demo) -> None:
    """Sources the generator planned as never captured, looping or dead from the start are
    classified so (a citation whose URL was deliberately malformed says invalid_url)."""
    from datetime import date

    from citeaudit.demo_corpus.world import Params, World, web_source

    _, derived, truth = demo
    gen = truth["generator"]
    world = World.for_params(Params(gen["seed"], gen["answers"], gen["days"],
                                    date.fromisoformat(gen["start_date"])))
    plans = {}
    for g in range(world.scale.n_web):
        src = web_source(world, g)
        plans[src.source_id] = src
    cited = {r["citation_id"]: r for r in _rows(derived, "citations", depth=1)}
    expected = {"never_captured": {("unresolved", "no_capture_in_window")},
                "loop": {("dead", "redirect_loop")},
                "dead": {("dead", "http_404"), ("dead", "http_410")}}
    # The generator crawls a source on the days it is cited; a citation retrieved more than the
    # window's one day before that crawl has no capture in its window and is rightly unknown.
    times: dict[str, list] = {}
    for c in _rows(derived, "captures", depth=1):
        times.setdefault(c["urlkey"], []).append(c["capture_time"])
    window = AlignmentWindow(7, 1)
    seen = Counter()
    for r in _rows(derived, "citation_existence"):
        cite = cited[r["citation_id"]]
        src = plans.get(cite["source_id"])
        if src is None or src.plan not in expected or r["reason"] in ("invalid_url", "no_url"):
            continue
        ref = r["reference_time"]
        in_window = any(-window.before_days * 86400 <= (t - ref).total_seconds()
                        <= window.after_days * 86400
                        for t in times.get(canonicalize(cite["url"], is_tracking).key, []))
        want = expected[src.plan] if in_window or src.plan == "never_captured" else {
            ("unresolved", "no_capture_in_window")}
        assert (r["verdict"], r["reason"]) in want, (src.plan, r)
        seen[src.plan if in_window else "out_of_window"] += 1
    assert seen["dead"] > 0 and sum(seen.values()) >= 3, seen


# ------------------------------------------------------------------------- real WARCs
def _book():
    from citeaudit.codebook import Codebook, Policy, ReviewSampling, Scholarly

    return Codebook("t", "", {}, {}, {}, Policy(0.5), (), AlignmentWindow(7, 1), GLOBS,
                    ReviewSampling(), Scholarly(), {})


def test_url_agnostic_revisit_of_pywb_resolves_to_its_original(corpora: Path,
                                                                tmp_path: Path) -> None:
    folder = corpora / "warc" / "pywb" / "warcs"
    files = [folder / "example-url-agnostic-orig.warc.gz",
             folder / "example-url-agnostic-revisit.warc.gz"]
    caps = index_paths([(f, f.name) for f in files])
    cap_path = tmp_path / "caps.parquet"
    import pyarrow.parquet as pq

    pq.write_table(caps, cap_path)
    rev = [r for r in caps.to_pylist() if r["record_type"] == "revisit"][0]
    citations = pa.table({"answer_id": ["a"], "claim_id": ["c"], "citation_id": ["x"],
                          "url": [rev["target_uri"]],
                          "retrieved_at": pa.array([rev["capture_time"]],
                                                   pa.timestamp("us", tz="UTC"))})
    answers = pa.table({"answer_id": ["a"],
                        "observed_at": pa.array([rev["capture_time"]],
                                                pa.timestamp("us", tz="UTC"))})
    out = align.align(citations, answers, tmp_path, _book(),
                          capture_paths=[str(cap_path)]).to_pylist()[0]
    assert out["resolution_issue"] is None and out["final_record_type"] == "revisit"
    assert out["payload_file"] == "example-url-agnostic-orig.warc.gz"
    assert out["payload_sha256"] is not None
    assert align.existence(align.align(
        citations, answers, tmp_path, _book(), capture_paths=[str(cap_path)]
    )).to_pylist()[0]["verdict"] == "pass"


def test_payload_text_honours_euc_jp_and_gzip_of_clueweb(corpora: Path) -> None:
    path = corpora / "warc" / "resiliparse" / "clueweb-quirk.warc.gz"
    caps = index_paths([(path, path.name)]).to_pylist()
    rows = [payload_text.extract_one(path, r["offset"]) for r in caps
            if r["record_type"] == "response"]
    assert rows
    charsets = {r["charset"] for r in rows if r["error"] is None}
    assert "euc-jp" in charsets, charsets
    japanese = [r for r in rows if r["charset"] == "euc-jp"]
    assert any(any("\u3040" <= ch <= "\u30ff" or "\u4e00" <= ch <= "\u9fff" for ch in r["text"])
               for r in japanese)
    assert all("\ufffd" not in r["text"][:2000] for r in japanese)


def test_payload_text_on_common_crawl_excerpt(corpora: Path) -> None:
    path = corpora / "warc" / "resiliparse" / "warcfile.warc.gz"
    caps = index_paths([(path, path.name)]).to_pylist()
    rows = [payload_text.extract_one(path, r["offset"]) for r in caps
            if r["record_type"] == "response" and (r["mime"] or "").startswith("text/html")]
    assert len(rows) >= 10
    assert all(r["error"] is None and r["text"] for r in rows)


def test_answer_batches_keep_answers_whole() -> None:
    ids = pa.chunked_array([["a", "a", "b", "c", "c", "c"], ["d", None, None]])
    assert align.answer_batches(ids, 2) == [("a", "a"), ("b", "c"), ("d", "d"), (None, None)]
    assert align.answer_batches(ids, 100) == [("a", "d"), (None, None)]
    assert align.answer_batches(pa.array([], pa.string()), 5) == []


def test_citations_aligned_in_batches_equal_the_written_day(demo) -> None:
    """Batches of a few answers give the rows the asset wrote, in its order (each citation's
    row depends only on it and the captures)."""
    import pyarrow.parquet as pq

    from citeaudit import codebook

    raw, derived, _ = demo
    written = max((derived / "citation_captures").glob("*/codebook=v1/data.parquet"),
                  key=lambda f: f.stat().st_size)  # the date with the most citations
    date = written.parent.parent.name.split("=", 1)[1]
    day = derived / "citations" / f"observation_date={date}" / "data.parquet"
    citations = pq.read_table(day, columns=align.CITATION_COLUMNS)
    answers = pq.read_table(derived / "answers" / f"observation_date={date}" / "data.parquet",
                            columns=align.ANSWER_COLUMNS)
    book = codebook.load_version(raw, "v1")
    from citeaudit import config

    replay = config.load(raw).replay.link_prefix()
    batches = list(align.align_batches(citations, answers, derived, book, replay_prefix=replay,
                                       batch_citations=citations.num_rows // 4))
    assert len(batches) > 2
    firsts = [b.column("answer_id")[0].as_py() for b in batches]
    lasts = [b.column("answer_id")[-1].as_py() for b in batches]
    assert all(lo > hi for lo, hi in zip(firsts[1:], lasts[:-1], strict=True))  # answers whole
    assert pa.concat_tables(batches).equals(pq.read_table(written))
