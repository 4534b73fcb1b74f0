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


def test_step_processes_write_the_in_process_bytes(small_run, tmp_path, monkeypatch):
    """A judged run's registry step and a CPU step beside it, each in its own step process
    (the multiprocess location, as ``auto`` runs a large night), over a copy of the shared
    small run with their outputs removed: every file comes back byte for byte."""
    from pipelines.jobs import judged_audit
    from pipelines.partitions import judged_key

    run = small_run.copy(tmp_path)
    date = sorted(p.name.split("=", 1)[1]
                  for p in (run.derived / "metadata_checks").glob("observation_date=*"))[0]
    version = sorted(p.name.split("=", 1)[1] for p in
                     (run.derived / "metadata_checks" / f"observation_date={date}").iterdir())[0]
    assets = ("scholarly_records", "metadata_checks", "citation_captures")
    before = {}
    for asset in assets:
        folder = run.derived / asset / f"observation_date={date}" / f"codebook={version}"
        before |= {f.relative_to(run.derived): f.read_bytes() for f in folder.rglob("*")
                   if f.is_file()}
        shutil.rmtree(folder)
    monkeypatch.setenv("DAGSTER_HOME", str(run.home))
    monkeypatch.chdir(os.path.dirname(os.path.dirname(overlap.__file__)))
    with dg.DagsterInstance.get() as instance:
        job = overlap.recon_job(judged_audit.name)
        key = judged_key(date, version)
        tags = {"dagster/partition/date": date, "dagster/partition/codebook": version,
                "dagster/partition": str(key)}
        config = {"resources": {"paths": {"config": {"raw_dir": str(run.raw),
                                                     "derived_dir": str(run.derived)}}}}
        with dg.execute_job(job, instance, run_config=config, tags=tags,
                            asset_selection=[dg.AssetKey(a) for a in assets]) as result:
            assert result.success
            steps = {e.step_key for e in result.all_events if e.is_step_success}
    assert steps == {"check_metadata", "citation_captures"}
    after = {f.relative_to(run.derived): f.read_bytes()
             for asset in assets for f in (run.derived / asset / f"observation_date={date}"
                                           / f"codebook={version}").rglob("*") if f.is_file()}
    assert after.keys() == before.keys()
    assert [k for k in before if after[k] != before[k]] == []
