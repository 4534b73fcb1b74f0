"""End to end: a generated corpus through the real pipeline, checked against ground truth.

The demo generator plants known defects and writes ground_truth.json listing every one; the
session's shared demo run (a real `citeaudit run`, tests/conftest.py) must find exactly those: the
same rejected lines with the same field and reason, the same failing claims, the same verified
answers, the same WARC records and the truncated one. The plain `dagster` CLI
(`dagster asset materialize -m pipelines.definitions`, in a DAGSTER_HOME of its own) materializes
one date of the daily assets again: the same bytes as `citeaudit run` wrote.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from citeaudit.layout import discover_dates

PROJECT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
DAILY = "answers,claims,citations,rejected_inputs,captures,claim_checks,answer_checks"


def run(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=PROJECT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (
        f"{' '.join(cmd)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    return done


def _both_inputs_date(raw: Path) -> str:
    """The first date with both answers and WARCs: every daily asset has a partition there."""
    dates, _ = discover_dates(raw)
    return next(d for d in sorted(dates)
                if (raw / "answers" / d).is_dir() and (raw / "warc" / d).is_dir())


@pytest.fixture(scope="module")
def pipeline(demo_run, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The shared demo run's catalog (read only), and one date of the daily assets materialized
    again with the dagster CLI into a folder of this module's own."""
    tmp = tmp_path_factory.mktemp("e2e")
    raw, derived, home = demo_run.raw, tmp / "derived", tmp / "dagster_home"
    home.mkdir()
    shutil.copyfile(PROJECT / "tests" / "dagster.yaml", home / "dagster.yaml")
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "CITEAUDIT_RAW": str(raw),
        "CITEAUDIT_DERIVED": str(derived),
    }
    truth = json.loads((raw / "ground_truth.json").read_text())
    dates, _ = discover_dates(raw)  # observation and crawl dates, as `citeaudit run` finds them
    assert set(truth["dates"]) < set(dates)
    date = _both_inputs_date(raw)
    # the partitions are the data's dates, registered in the instance first (as `citeaudit ui`)
    run([sys.executable, "-m", "pipelines.runner", str(raw)], env)
    run([str(BIN / "dagster"), "asset", "materialize", "-m", "pipelines.definitions",
         "--select", DAILY, "--partition", date], env)
    con = duckdb.connect(str(demo_run.derived / "catalog.duckdb"), read_only=True)
    yield {"truth": truth, "con": con, "home": home, "raw": raw, "dates": dates, "date": date,
           "derived": derived, "shared": demo_run.derived}
    con.close()


def rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict]:
    rel = con.sql(sql)
    return [dict(zip(rel.columns, r, strict=True)) for r in rel.fetchall()]


def test_rejected_inputs_are_exactly_the_planted_ones(pipeline: dict) -> None:
    got = rows(
        pipeline["con"], "SELECT source_file AS file, source_line AS line, field, reason "
        "FROM rejected_inputs ORDER BY ALL"
    )
    want = sorted(
        pipeline["truth"]["rejected_inputs"],
        key=lambda r: (r["file"], r["line"], r["field"] or "", r["reason"]),
    )
    got = sorted(got, key=lambda r: (r["file"], r["line"], r["field"] or "", r["reason"]))
    assert got == want
    assert len(got) > 0, "the generator planted no defects: the test would prove nothing"


def test_claim_failures_are_exactly_the_planted_ones(pipeline: dict) -> None:
    got = rows(
        pipeline["con"],
        "SELECT answer_id, claim_id, claim_index, reason FROM claim_checks "
        "WHERE verdict = 'fail' ORDER BY ALL",
    )
    want = sorted(
        pipeline["truth"]["claim_failures"], key=lambda r: (r["answer_id"], r["claim_index"])
    )
    got = sorted(got, key=lambda r: (r["answer_id"], r["claim_index"]))
    assert got == want
    assert {r["reason"] for r in got} == {
        "missing_citation",
        "malformed_citation",
        "hallucinated_citation",
    }


def test_answer_verdicts_match(pipeline: dict) -> None:
    got = rows(
        pipeline["con"],
        "SELECT answer_id, verdict = 'verified' AS verified, reason, claim_index "
        "FROM answer_checks ORDER BY answer_id",
    )
    assert got == sorted(pipeline["truth"]["answer_verdicts"], key=lambda r: r["answer_id"])


def test_counts_and_cost_per_served_answer(pipeline: dict) -> None:
    counts = pipeline["truth"]["counts"]
    con = pipeline["con"]
    assert con.sql("SELECT count(*) FROM answers").fetchall()[0][0] == counts["accepted_answers"]
    assert con.sql("SELECT count(*) FROM claims").fetchall()[0][0] == counts["claims"]
    assert con.sql("SELECT count(*) FROM citations").fetchall()[0][0] == counts["citations"]
    served = con.sql(
        "SELECT count(*), sum(input_tokens), sum(output_tokens) FROM answer_checks WHERE served"
    ).fetchall()[0]
    assert served[0] == counts["verified_answers"]
    assert (served[1] or 0, served[2] or 0) == (
        counts["input_tokens_served"],
        counts["output_tokens_served"],
    )


def test_captures_match_the_warcs_written(pipeline: dict) -> None:
    """The generated WARCs' records (the live capture the demo run also made is citeaudit's own,
    checked by tests/archive): per file and type, the truncated ones, the status counts."""
    truth = pipeline["truth"]["warc"]
    con = pipeline["con"]
    files = {"files": [entry["file"] for entry in truth["files"]]}

    def generated(select: str) -> list[tuple]:
        return con.execute(f"WITH generated AS (SELECT * FROM captures WHERE list_contains("
                           f"$files, file)) {select}", files).fetchall()

    got = Counter(
        (f, t)
        for f, t, n in generated("SELECT file, record_type, count(*) FROM generated GROUP BY ALL")
        for _ in range(n)
    )
    for entry in truth["files"]:
        for record_type in ("response", "revisit"):
            assert got[(entry["file"], record_type)] == entry["records"].get(record_type, 0), entry[
                "file"
            ]
    assert sum(got.values()) > 0
    truncated = sorted(
        generated("SELECT file, target_uri FROM generated WHERE truncated ORDER BY ALL")
    )
    assert truncated == sorted((t["file"], t["url"]) for t in truth["truncated"])
    statuses = dict(
        generated(
            "SELECT http_status::VARCHAR, count(*) FROM generated "
            "WHERE record_type = 'response' AND http_status IS NOT NULL GROUP BY ALL"
        )
    )
    assert statuses == truth["status_counts"]


def test_runs_are_recorded_in_the_instance(pipeline: dict) -> None:
    from dagster import DagsterInstance, DagsterRunStatus

    with DagsterInstance.from_config(str(pipeline["home"])) as instance:
        runs = instance.get_runs()
        assert len(runs) == 1
        assert all(r.status == DagsterRunStatus.SUCCESS for r in runs)


def test_the_dagster_cli_writes_the_bytes_of_citeaudit_run(pipeline: dict) -> None:
    """Each daily asset's partition of the date, as `dagster asset materialize` wrote it, is
    byte-identical to the one `citeaudit run` wrote into the shared demo run."""
    derived, shared = pipeline["derived"], pipeline["shared"]
    files = sorted(p.relative_to(derived) for p in derived.rglob("*.parquet"))
    assert {f.parts[0] for f in files} == set(DAILY.split(","))
    assert all(f"={pipeline['date']}" in f.as_posix() for f in files), files
    for rel in files:
        assert (derived / rel).read_bytes() == (shared / rel).read_bytes(), rel
