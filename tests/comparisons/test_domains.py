"""The per-domain view (``cited_domains``): counts, rates over resolved units with intervals
clustered by query, unresolved beside, sources retrieved but never cited; on small tables
written as partitions, and on the shared demo run."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from citeaudit import parquet_io
from citeaudit.comparisons import domains
from citeaudit.ingest import answers as ingest

DATE, V = "2026-11-02", "v1"


def _write(derived: Path, tables: dict[str, list[dict]], schemas: dict[str, pa.Schema]) -> None:
    for name, rows in tables.items():
        part = {"observation_date": DATE} if name in ("answers", "citations") else \
            {"observation_date": DATE, "codebook": V}
        parquet_io.write_partition(pa.Table.from_pylist(rows, schema=schemas[name]), derived,
                                   name, part)


S = pa.string()
SCHEMAS = {
    "answers": pa.schema([("answer_id", S), ("query_id", S), ("engine", S),
                          ("retrieved_not_cited", pa.list_(S))]),
    "citations": pa.schema([("citation_id", S), ("answer_id", S), ("claim_id", S), ("url", S)]),
    "citation_existence": pa.schema([("citation_id", S), ("verdict", S)]),
    # the contract's columns (no grain: a claim-grain label is one without a citation_id)
    "support_labels": pa.schema([("claim_id", S), ("citation_id", S), ("verdict", S),
                                 ("basis", S)]),
}


def _tables() -> dict[str, list[dict]]:
    """Two engines. x cites news.example from 4 queries (q0's 5 citations all dead: one
    query's page, five times) and www.blog.example once (unresolved L1); y cites news.example
    once and retrieved pages on wiki.example and news.example it never cited."""
    answers, citations, existence, labels = [], [], [], []
    for q in range(4):
        answers.append({"answer_id": f"x{q}", "query_id": f"q{q}", "engine": "x",
                        "retrieved_not_cited": None})
        n = 5 if q == 0 else 1
        for k in range(n):
            cid = f"x{q}c{k}"
            citations.append({"citation_id": cid, "answer_id": f"x{q}", "claim_id": f"x{q}k",
                              "url": f"https://news.example/a{q}"})
            existence.append({"citation_id": cid, "verdict": "dead" if q == 0 else
                              ("changed" if q == 1 else "pass")})
            labels.append({"claim_id": f"x{q}k", "citation_id": cid,
                           "verdict": "unsupported" if q == 2 else
                           ("unresolved" if q == 3 else "fully_supported"),
                           "basis": "human" if q else "grader_only"})
    labels.append({"claim_id": "x1k", "citation_id": None, "verdict": "contradicted",
                   "basis": "human"})  # the claim's own label: not a pair's
    citations.append({"citation_id": "x1c9", "answer_id": "x1", "claim_id": "x1k",
                      "url": "https://www.blog.example/p"})
    existence.append({"citation_id": "x1c9", "verdict": "unresolved"})
    answers.append({"answer_id": "y0", "query_id": "q0", "engine": "y",
                    "retrieved_not_cited": ["https://wiki.example/w", "https://news.example/b",
                                            "not a url"]})
    citations.append({"citation_id": "y0c0", "answer_id": "y0", "claim_id": "y0k",
                      "url": "https://news.example/a0"})
    existence.append({"citation_id": "y0c0", "verdict": "dead"})
    return {"answers": answers, "citations": citations, "citation_existence": existence,
            "support_labels": labels}


def test_counts_rates_and_intervals_on_small_tables(tmp_path: Path) -> None:
    _write(tmp_path, _tables(), SCHEMAS)
    table = domains.cited_domains(tmp_path, DATE, V)
    assert table.schema == domains.SCHEMA
    rows = {(r["engine"], r["cited_domain"]): r for r in table.to_pylist()}
    x = rows[("x", "news.example")]
    assert (x["citations"], x["answers"], x["queries"]) == (8, 4, 4)
    assert (x["existence_resolved"], x["dead"], x["changed"]) == (8, 5, 1)
    assert x["dead_rate"] == pytest.approx(5 / 8)
    # 8 citations from 4 queries (5, 1, 1, 1): Kish's size 64/28 = 2.3, not 8
    assert x["dead_ci_low"] < 0.2 and x["dead_ci_high"] > 0.9
    # support: q0's labels are grader-only and q3's a tie: unresolved, beside
    assert (x["support_resolved"], x["unsupported"], x["support_unresolved"]) == (2, 1, 6)
    assert x["unsupported_rate"] == pytest.approx(0.5)
    blog = rows[("x", "blog.example")]
    assert blog["existence_unresolved"] == 1 and blog["dead_rate"] is None
    assert blog["dead_ci_low"] is None and blog["support_resolved"] == 0
    # y cited news.example once and retrieved two pages it never cited
    assert rows[("y", "news.example")]["retrieved_not_cited"] == 1
    wiki = rows[("y", "wiki.example")]
    assert (wiki["citations"], wiki["retrieved_not_cited"], wiki["dead_rate"]) == (0, 1, None)
    # all engines: q0's answers by x and y one cluster
    pooled = rows[("all", "news.example")]
    assert (pooled["citations"], pooled["queries"], pooled["dead"]) == (9, 4, 6)
    assert ("all", "wiki.example") in rows
    assert all(r["method"] == "wilson_query_clusters" for r in rows.values())
    assert domains.cited_domains(tmp_path, DATE, V).equals(table)


def test_missing_judgments_are_unresolved_not_zero(tmp_path: Path) -> None:
    tables = _tables()
    del tables["citation_existence"], tables["support_labels"]
    _write(tmp_path, tables, SCHEMAS)
    rows = domains.cited_domains(tmp_path, DATE, V).to_pylist()
    assert rows and all(r["dead_rate"] is None and r["unsupported_rate"] is None for r in rows)
    x = next(r for r in rows if (r["engine"], r["cited_domain"]) == ("x", "news.example"))
    assert x["existence_unresolved"] == 8 and x["support_unresolved"] == 8
    with pytest.raises(FileNotFoundError, match="answers, citations not materialized"):
        domains.cited_domains(tmp_path, "2020-01-01", V)


def test_cited_domain_of_a_url() -> None:
    assert domains.cited_domain("https://www.bbc.co.uk/news/x") == "bbc.co.uk"
    assert domains.cited_domain("https://user.github.io/p") == "user.github.io"
    assert domains.cited_domain("http://10.0.0.1:8080/a") == "10.0.0.1"
    assert domains.cited_domain("https://news.example/x") == "news.example"
    assert domains.cited_domain("mailto:a@b.org") is None
    assert domains.cited_domain("not a url") is None and domains.cited_domain(None) is None


def test_answers_keep_version_and_retrieved_sources(tmp_path: Path) -> None:
    """The optional answer fields the view and the version comparison read, through ingest:
    kept when given, null when absent, a wrong type rejects the line (named)."""
    from tests.ingest.test_answers_ingest import good_answer

    lines = [good_answer("a1", system_version="2026-11-model-b",
                         retrieved_not_cited=[{"url": "https://x.org/a", "title": "t"}]),
             good_answer("a2"), good_answer("a3", system_version=3),
             good_answer("a4", retrieved_not_cited="https://x.org")]
    folder = tmp_path / "answers" / DATE
    folder.mkdir(parents=True)
    (folder / "e.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    result = ingest.ingest_files(ingest.answer_files(tmp_path, DATE), tmp_path)
    got = result.answers.select(["answer_id", "system_version", "retrieved_not_cited"])
    assert got.to_pylist() == [
        {"answer_id": "a1", "system_version": "2026-11-model-b",
         "retrieved_not_cited": ["https://x.org/a"]},
        {"answer_id": "a2", "system_version": None, "retrieved_not_cited": None}]
    assert [(r["source_line"], r["field"], r["reason"]) for r in result.rejected.to_pylist()] \
        == [(3, "system_version", "wrong_type"), (4, "retrieved_not_cited", "wrong_type")]


def test_demo_cited_domains_add_up(demo_run) -> None:
    """On the shared demo run: every citation with a domain is counted once per engine and
    once in ``all``; the dead counts are citation_existence's."""
    con = duckdb.connect()
    d = demo_run.derived

    def q(sql: str) -> list[tuple]:
        return con.sql(sql.replace("DER", str(d))).fetchall()

    date = demo_run.truth["dates"][-1]
    table = domains.read(d, date, "v2")
    assert table is not None and table.num_rows > 0
    con.register("t", table)
    [(cited, dead)] = q(f"""
        SELECT count(*), count(*) FILTER (WHERE e.verdict = 'dead')
        FROM read_parquet('DER/citations/observation_date={date}/*.parquet') c
        LEFT JOIN read_parquet(
            'DER/citation_existence/observation_date={date}/codebook=v2/*.parquet') e
            USING (citation_id)
        WHERE regexp_matches(c.url, '^https?://')""")
    [(all_cited, all_dead, engines_cited)] = q("""
        SELECT sum(citations) FILTER (WHERE engine = 'all'),
               sum(dead) FILTER (WHERE engine = 'all'),
               sum(citations) FILTER (WHERE engine <> 'all') FROM t""")
    assert all_cited == engines_cited == cited and all_dead == dead
    for r in table.to_pylist():
        if r["dead_rate"] is not None:
            assert r["dead_ci_low"] <= r["dead_rate"] <= r["dead_ci_high"]


def test_demo_report_and_terminal_show_the_domains(demo_run, capsys) -> None:
    """The report's "Cited domains" section and ``citeaudit domains`` (exit 0; 2 when the date
    or engine is not there, saying what to run)."""
    from citeaudit import cli

    date = demo_run.truth["dates"][-1]
    html = (demo_run.derived / "report" / f"observation_date={date}" / "codebook=v2"
            / "index.html").read_text(encoding="utf-8")
    section = html[html.index('<section id="domains">'):]
    section = section[:section.index("</section>")]
    top = domains.view(domains.read(demo_run.derived, date, "v2"))["rows"][0]
    assert f"<td>{top['cited_domain']}</td>" in section and "never-cited" in section
    args = ["domains", "--raw", str(demo_run.raw), "--derived", str(demo_run.derived)]
    assert cli.main([*args, "--date", date, "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert f"Cited domains on {date}" in out and top["cited_domain"] in out
    assert cli.main([*args, "--date", date, "--engine", "nosuch"]) == 2
    assert "--engine: nosuch not among the engines" in capsys.readouterr().err
    assert cli.main([*args, "--date", "2020-01-01"]) == 2
    assert "run `citeaudit run" in capsys.readouterr().err
