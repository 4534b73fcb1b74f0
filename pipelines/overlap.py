"""Waiting overlaps work: a judged run's registry lookups beside its CPU steps.

``check_metadata`` spends most of a large night waiting on the registries' documented polite
rates (Crossref 10 single records and 3 lists or searches per second) and needs only the day's
``citations``; the steps that read the captures (``citation_captures``, ``payload_texts``,
``support_evidence``, ``passage_checks``, ...) need none of it. In process, Dagster executes one
step after the other, so the wait and the CPU work add up.

``auto`` (the default of ``citeaudit run``) computes such a judged partition as three Dagster
runs of the judged job (:func:`split`, ``pipelines.runner``): the registry step's assets in a
step process of the multiprocess location (below), while the assets that do not depend on them
run in the ``citeaudit`` process; when both have succeeded, the assets downstream of
``metadata_checks`` (metrics, comparisons, alerts, report) run in process. Only the registry
step pays for a process; the thread that orchestrates its run is joined before the partition
is done. Each asset is materialized once, by Dagster, from its inputs on disk, so every output
has the same bytes as in one in-process run. ``auto`` does so for a judged run when the date has
at least ``MIN_CITATIONS_ENV`` (default 5,000) citations **and** no ``scholarly_records`` of
that date is on disk yet (its first codebook: the lookups are to be made; a second codebook's
lookups come from the cache and have nothing to wait on); every other run stays in one
in-process run.

``--executor multiprocess`` runs every daily and judged run with Dagster's multiprocess
executor, two steps at a time, ``check_metadata`` first (``dagster/priority``), step processes
forked from a forkserver that preloaded the code location; each step pays ≈ 1-3 s for its
process (fork, instance, resources, events), so it is not the default.
"""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq

from citeaudit import storage
from citeaudit.scholarly import cache

MAX_CONCURRENT = 2
# Step priority of the registry step: higher runs first among the steps ready at once.
REGISTRY_PRIORITY = "10"
MIN_CITATIONS_ENV = "CITEAUDIT_OVERLAP_MIN_CITATIONS"
DEFAULT_MIN_CITATIONS = 5000
LOCATION = "pipelines.overlap_location"


def multiprocess_executor_def() -> dg.ExecutorDefinition:
    """Dagster's multiprocess executor, two steps at a time (the machine's two cores: one step
    waiting on the registries, one computing)."""
    return dg.multiprocess_executor.configured(
        {"max_concurrent": MAX_CONCURRENT,
         # one server process imports Dagster and the code location once and forks each step
         # process from it: a spawned step process would import them anew (seconds a step)
         "start_method": {"forkserver": {"preload_modules": [LOCATION]}}},
        name="multiprocess",
    )


def min_citations() -> int:
    """The citations of a date from which ``auto`` overlaps its registry wait."""
    text = os.environ.get(MIN_CITATIONS_ENV, "").strip()
    if not text:
        return DEFAULT_MIN_CITATIONS
    try:
        value = int(text)
    except ValueError as exc:
        raise ValueError(f"{MIN_CITATIONS_ENV}={text!r}: not a whole number") from exc
    if value < 0:
        raise ValueError(f"{MIN_CITATIONS_ENV}={text!r}: must be 0 or more")
    return value


def citation_count(derived: Path, date: str) -> int:
    """Rows of the date's ``citations`` partition (from the parquet footers; 0 when absent)."""
    folder = storage.path(derived) / "citations" / f"observation_date={date}"
    return sum(pq.ParquetFile(f).metadata.num_rows for f in sorted(folder.glob("*.parquet")))


def lookups_cached(derived: Path, date: str) -> bool:
    """Whether a codebook's ``scholarly_records`` of the date is on disk, written after the
    last forced refresh (``citeaudit run --refresh-registries``): the date's lookups are made."""
    folder = storage.path(derived) / "scholarly_records" / f"observation_date={date}"
    refreshed = cache.refreshed_at(derived)
    return any(refreshed is None or f.stat().st_mtime >= refreshed.timestamp()
               for f in folder.glob("codebook=*/*.parquet"))


def overlaps(derived: Path, date: str) -> bool:
    """Whether ``auto`` runs this date's judged run with the multiprocess executor (see the
    module docstring). A derived folder on object storage stays in process."""
    if storage.is_remote(derived) or lookups_cached(derived, date):
        return False
    return citation_count(derived, date) >= min_citations()


REGISTRY_ASSETS = ("scholarly_records", "metadata_checks")


def split(job: dg.JobDefinition) -> tuple[list[dg.AssetKey], list[dg.AssetKey], list[dg.AssetKey]]:
    """The judged job's assets in three: the registry step's, the ones that do not depend on
    them (run beside it), and the ones downstream of them (run after it)."""
    graph = job.asset_layer.asset_graph
    registry = dg.AssetSelection.assets(*REGISTRY_ASSETS)
    everything = set(dg.AssetSelection.all().resolve(graph))
    after = set(registry.downstream().resolve(graph)) - set(registry.resolve(graph))
    mine = set(registry.resolve(graph))
    return (sorted(mine), sorted(everything - mine - after), sorted(after & everything))


def recon_job(name: str):  # -> ReconstructableJob
    """A job of the multiprocess code location, by a pointer each step process loads."""
    from dagster._core.definitions.reconstruct import ReconstructableRepository

    repo = ReconstructableRepository.for_module(LOCATION, "defs", working_directory=os.getcwd())
    return repo.get_reconstructable_job(name)
