"""Helpers of the operations tests: the judged assets defined, and file snapshots."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from pipelines.definitions import build_defs
from pipelines.partitions import date_codebook, observation_date
from pipelines.resources import PathsResource


def judged_assets() -> list[str]:
    """Every asset partitioned by date × codebook, failing the test when there is none.

    The operations tests (backfill isolation, byte-identical reruns, the SIGKILL test) prove
    nothing about codebook partitions without at least one such asset.
    """
    graph = build_defs(PathsResource()).resolve_asset_graph()
    names = sorted(
        key.to_user_string()
        for key in graph.get_all_asset_keys()
        if graph.get(key).is_materializable and graph.get(key).partitions_def == date_codebook
    )
    assert names, (
        "no asset is partitioned by date × codebook yet: this test needs "
        "at least one to mean anything"
    )
    return names


def daily_assets() -> list[str]:
    """Every asset partitioned by observation date."""
    graph = build_defs(PathsResource()).resolve_asset_graph()
    return sorted(
        key.to_user_string()
        for key in graph.get_all_asset_keys()
        if graph.get(key).partitions_def == observation_date
    )


def digests(folder: Path) -> dict[str, str]:
    """SHA-256 of every output file under ``folder`` (parquet and any other file an asset
    writes), by relative path; the catalog and hidden temporary files are left out."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "catalog.duckdb" and not p.name.startswith(".")
    }


def job_assets() -> set[str]:
    """The assets `citeaudit run` materializes: those of its jobs."""
    from pipelines.jobs import JOBS

    defs = build_defs(PathsResource())
    return {
        key.to_user_string()
        for job in JOBS
        for key in defs.resolve_job_def(job.name).asset_layer.executable_asset_keys
    }


def snapshot(files: list[Path]) -> dict[str, tuple[str, int, int]]:
    """(sha256, mtime_ns, inode) of each file: a rewrite with the same bytes still shows."""
    out = {}
    for path in files:
        st = path.stat()
        out[str(path)] = (hashlib.sha256(path.read_bytes()).hexdigest(), st.st_mtime_ns, st.st_ino)
    return out


def codebook_files(derived: Path, version: str) -> list[Path]:
    """Every file under ``derived/*/**/codebook=<version>/``."""
    return sorted(
        p
        for p in derived.rglob("*")
        if p.is_file() and f"codebook={version}" in p.relative_to(derived).parts
    )


def answer_day_crawls_only(raw: Path) -> None:
    """Keep only the WARCs crawled on an answer date of the generated corpus ``raw``.

    The demo corpus also crawls the day before and after its answer dates (and plants captures
    a week earlier): each such date is one more daily run, about nine Dagster steps. A test
    whose corpus only has to go through the pipeline (byte-identical reruns, crashes, other
    storage or executors, status) needs none of them: its citations then find their captures on
    the answer date or nowhere, which is as good a corpus for those checks.
    """
    answer_dates = {p.name for p in (raw / "answers").iterdir()}
    for folder in (raw / "warc").iterdir():
        if folder.name not in answer_dates:
            shutil.rmtree(folder)
