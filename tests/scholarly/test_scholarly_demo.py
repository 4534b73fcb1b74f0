"""metadata_checks in a real ``citeaudit run`` over a demo corpus, with no network.

The demo generator writes registry answers (``registry/``) and the planted metadata errors; the
run serves them from a loopback server to the real crossrefapi and pyalex clients. Every
checked citation must get the verdict ground truth expects for its source; the cache must make
one request per new lookup, and a second run none.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import duckdb
import pytest


@pytest.fixture(scope="module")
def run(demo_run, demo_rerun):
    """The shared demo run (conftest), and the shared second ``citeaudit run`` over a private
    copy of it (conftest's demo_rerun): the copy carries the first run's registry cache and run
    history."""
    first = _requests(demo_run.home)
    second = _requests(demo_rerun.home)
    return demo_run.raw, demo_run.derived, first, second


@contextmanager
def _dagster_home(home: Path):
    """DAGSTER_HOME pointed at ``home`` for the block, restored after (no leak to other tests)."""
    before = os.environ.get("DAGSTER_HOME")
    os.environ["DAGSTER_HOME"] = str(home)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("DAGSTER_HOME", None)
        else:
            os.environ["DAGSTER_HOME"] = before


def _requests(home: Path) -> list[dict]:
    """requests_made / citations_checked of every metadata_checks materialization so far."""
    with _dagster_home(home), dg.DagsterInstance.get() as instance:
        events = instance.fetch_materializations(dg.AssetKey("metadata_checks"), limit=1000)
        out = []
        for rec in events.records:
            meta = rec.asset_materialization.metadata
            out.append({k: int(meta[k].value) for k in ("requests_made", "citations_checked",
                                                         "records_from_cache",
                                                         "lookups_fetched")})
        return out


def _checks(derived: Path) -> list[dict]:
    con = duckdb.connect()
    return con.sql(
        f"""SELECT m.*, c.source_id
        FROM read_parquet('{derived}/metadata_checks/*/*/data.parquet', hive_partitioning=1) m
        JOIN read_parquet('{derived}/citations/*/data.parquet', hive_partitioning=1) c
          USING (citation_id)
        ORDER BY m.codebook, m.citation_id""").to_arrow_table().to_pylist()


def test_every_planted_case_gets_its_expected_verdict(run):
    raw, derived, _, _ = run
    truth = json.loads((raw / "ground_truth.json").read_text())["scholarly"]
    expected = {s["source_id"]: s for s in truth["sources"]}
    rows = _checks(derived)
    assert rows, "no metadata_checks rows"
    seen = set()
    for row in rows:
        want = expected[row["source_id"]]
        got = (row["verdict"], row["mismatch_fields"], row["retracted"], row["candidate_doi"],
               row["registries_agree"])
        assert got == (want["verdict"], want["mismatch_fields"], want["retracted"],
                       want["candidate_doi"], want["registries_agree"]), \
            (row["source_id"], want, row["explanation"])
        seen.add(want["defect"])
    # the corpus exercises every kind of planted case
    assert {"none", "year", "title", "first_author", "fabricated_doi", "no_doi",
            "no_doi_registered"} <= seen, seen
    assert any(r["retracted"] for r in rows)
    assert any(r["registries_agree"] is False for r in rows)
    assert all(r["verdict"] != "unresolved" for r in rows)


def test_one_request_per_new_lookup_and_none_on_a_second_run(run):
    _, derived, first, second = run
    con = duckdb.connect()
    lookups = con.sql(f"""SELECT count(DISTINCT (registry, kind, lookup_key))
        FROM read_parquet('{derived}/scholarly_records/*/*/data.parquet')""").fetchall()[0][0]
    fetched_first = sum(m["lookups_fetched"] for m in first)
    assert fetched_first == lookups  # each lookup fetched once, over both dates and codebooks
    made_first = sum(m["requests_made"] for m in first)
    assert 0 < made_first < lookups  # DOIs went in lists
    assert len(second) == 2 * len(first)
    assert sum(m["requests_made"] for m in second) == made_first  # the rerun made none
    assert sum(m["lookups_fetched"] for m in second) == fetched_first
    checked = sum(m["citations_checked"] for m in first)
    assert checked > 0 and lookups > 0


def test_claim_independence_counts_shared_origins_once(run):
    _, derived, _, _ = run
    con = duckdb.connect()
    rows = con.sql(f"""SELECT * FROM read_parquet(
        '{derived}/claim_independence/*/*/data.parquet', hive_partitioning=1)""").fetchall()
    assert rows
    bad = con.sql(f"""SELECT count(*) FROM read_parquet(
        '{derived}/claim_independence/*/*/data.parquet')
        WHERE n_independent_sources > n_citations
           OR (n_citations > 0 AND n_independent_sources = 0)""").fetchall()[0][0]
    assert bad == 0
    shared = con.sql(f"""SELECT count(*) FROM read_parquet(
        '{derived}/claim_independence/*/*/data.parquet')
        WHERE has_shared_source""").fetchall()[0][0]
    assert shared > 0


def _materialize(raw: Path, derived: Path, home: Path, **resources) -> list[dict]:
    import shutil

    from assets.scholarly import check_metadata
    from pipelines import partitions
    from pipelines.partitions import judged_key
    from pipelines.resources import PathsResource

    home.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(Path(__file__).resolve().parents[1] / "dagster.yaml", home / "dagster.yaml")
    with _dagster_home(home), dg.DagsterInstance.get() as instance:
        partitions.register(instance, answer_dates=["2026-11-01"], versions=["v1"])
        result = dg.materialize(
            [check_metadata],
            partition_key=judged_key("2026-11-01", "v1"),
            resources={"paths": PathsResource(raw_dir=str(raw), derived_dir=str(derived)),
                       **resources},
            instance=instance,
        )
        assert result.success
    path = derived / "metadata_checks" / "observation_date=2026-11-01" / "codebook=v1"
    con = duckdb.connect()
    return con.sql(f"""SELECT citation_id, verdict, mismatch_fields, retracted, candidate_doi,
        retraction_status, registries_agree
        FROM read_parquet('{path}/data.parquet')
        ORDER BY citation_id""").to_arrow_table().to_pylist()


def test_offline_run_checks_from_the_cache_and_fails_closed_without_it(run, tmp_path):
    import shutil

    from pipelines.resources import CrossrefResource, OpenAlexResource

    raw, derived, _, _ = run
    online = _checks(derived)
    want = sorted((r["citation_id"], r["verdict"], r["mismatch_fields"], r["retracted"],
                   r["candidate_doi"]) for r in online
                  if r["codebook"] == "v1" and str(r["observation_date"]) == "2026-11-01")
    offline = {"crossref": CrossrefResource(base_url="offline"),
               "openalex": OpenAlexResource(base_url="offline")}
    # a copy of the run's outputs: the registry cache is there, the registries are not
    copy = tmp_path / "derived"
    shutil.copytree(derived, copy)
    rows = _materialize(raw, copy, tmp_path / "home1", **offline)
    assert sorted((r["citation_id"], r["verdict"], r["mismatch_fields"], r["retracted"],
                   r["candidate_doi"]) for r in rows) == want
    # without the cache: every verdict is unresolved, never a mismatch, a 404 or a pass
    shutil.rmtree(copy / "scholarly_records")
    rows = _materialize(raw, copy, tmp_path / "home2", **offline)
    assert rows and {r["verdict"] for r in rows} == {"unresolved"}
    assert {r["retraction_status"] for r in rows} == {"unknown"}
    assert all(r["mismatch_fields"] is None and r["retracted"] is None
               and r["registries_agree"] is None for r in rows)
