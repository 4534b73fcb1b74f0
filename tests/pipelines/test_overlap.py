"""Waiting overlaps work (``pipelines.overlap``): which judged runs ``--executor auto`` runs
two steps at a time, the registry step's priority, and the same bytes from step processes."""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from citeaudit.scholarly import cache
from pipelines import overlap
from pipelines.distributed import DistributedError, executor_name

DATE = "2026-11-02"


def citations(derived, rows: int) -> None:
    folder = derived / "citations" / f"observation_date={DATE}"
    folder.mkdir(parents=True)
    pq.write_table(pa.table({"citation_id": [f"c{i}" for i in range(rows)]}),
                   folder / "data.parquet")


def test_auto_overlaps_a_large_date_whose_lookups_are_still_to_make(tmp_path, monkeypatch):
    monkeypatch.setenv(overlap.MIN_CITATIONS_ENV, "100")
    derived = tmp_path / "derived"
    citations(derived, 99)
    assert overlap.citation_count(derived, DATE) == 99
    assert not overlap.overlaps(derived, DATE)               # small: in process
    shutil.rmtree(derived / "citations")
    citations(derived, 100)
    assert overlap.overlaps(derived, DATE)                   # large, nothing asked yet
    records = derived / "scholarly_records" / f"observation_date={DATE}" / "codebook=v1"
    records.mkdir(parents=True)
    (records / "data.parquet").write_bytes(b"")
    assert not overlap.overlaps(derived, DATE)               # the first codebook asked
    later = records.stat().st_mtime + 60
    cache.mark_refresh(derived, datetime.fromtimestamp(later, UTC))
    assert overlap.overlaps(derived, DATE)                   # --refresh-registries: again
    monkeypatch.setenv(overlap.MIN_CITATIONS_ENV, "lots")
    with pytest.raises(ValueError, match=overlap.MIN_CITATIONS_ENV):
        overlap.min_citations()


def test_executor_names(monkeypatch):
    monkeypatch.delenv("CITEAUDIT_EXECUTOR", raising=False)
    assert executor_name() == "auto"
    monkeypatch.setenv("CITEAUDIT_EXECUTOR", "multiprocess")
    assert executor_name() == "multiprocess"
    monkeypatch.setenv("CITEAUDIT_EXECUTOR", "threads")
    with pytest.raises(DistributedError, match="auto, in_process, multiprocess, celery"):
        executor_name()


def test_the_registry_step_goes_first_two_at_a_time():
    from pipelines.overlap_location import defs

    job = defs.resolve_job_def("judged_audit")
    assert job.executor_def.name == "multiprocess"
    node = job.graph.node_named("check_metadata")
    assert node.definition.tags["dagster/priority"] == overlap.REGISTRY_PRIORITY
    others = [n.definition.tags.get("dagster/priority") for n in job.graph.nodes
              if n.name != "check_metadata"]
    assert set(others) == {None}


def test_the_judged_job_splits_around_the_registry_step():
    from pipelines.definitions import defs

    registry, beside, after = overlap.split(defs.resolve_job_def("judged_audit"))
    names = [[k.to_user_string() for k in part] for part in (registry, beside, after)]
    assert names[0] == ["metadata_checks", "scholarly_records"]
    assert {"payload_texts", "support_evidence", "passage_checks"} <= set(names[1])
    assert names[2] == ["alerts", "comparison_units", "comparisons", "metrics", "report"]


def test_registry_beside_writes_the_in_process_bytes(small_run, tmp_path, monkeypatch):
    """One judged partition as ``auto`` runs a large night's (the registry step in a step
    process beside an in-process run, then the steps after it), over a copy of the shared small
    run with every output of that partition removed: each file comes back byte for byte, and
    the instance holds the three successful runs."""
    from pipelines import runner
    from pipelines.definitions import build_defs
    from pipelines.jobs import judged_audit
    from pipelines.partitions import judged_key
    from pipelines.resources import PathsResource

    run = small_run.copy(tmp_path)
    date = sorted(p.name.split("=", 1)[1]
                  for p in (run.derived / "metadata_checks").glob("observation_date=*"))[0]
    version = "v1"
    before = {}
    for folder in run.derived.glob(f"*/observation_date={date}/codebook={version}"):
        before |= {f.relative_to(run.derived): f.read_bytes() for f in folder.rglob("*")
                   if f.is_file()}
        shutil.rmtree(folder)
    assert len({k.parts[0] for k in before}) >= 20
    monkeypatch.setenv("DAGSTER_HOME", str(run.home))
    monkeypatch.chdir(os.path.dirname(os.path.dirname(overlap.__file__)))
    paths = PathsResource(raw_dir=str(run.raw), derived_dir=str(run.derived))
    job = build_defs(paths).resolve_job_def(judged_audit.name)
    step = runner.Step("t", judged_audit.name, judged_key(date, version))
    config = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
    with dg.DagsterInstance.get() as instance:
        known = {r.dagster_run.run_id for r in instance.get_run_records()}
        assert runner._registry_beside(job, step, instance, config, {}, paths).success
        new = [r for r in instance.get_run_records() if r.dagster_run.run_id not in known]
    assert sorted(r.dagster_run.status.value for r in new) == ["SUCCESS"] * 3
    after = {}
    for folder in run.derived.glob(f"*/observation_date={date}/codebook={version}"):
        after |= {f.relative_to(run.derived): f.read_bytes() for f in folder.rglob("*")
                  if f.is_file()}
    assert after.keys() == before.keys()
    assert [k for k in before if after[k] != before[k]] == []
