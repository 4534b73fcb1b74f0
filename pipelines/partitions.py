"""Partitions: the data's own observation dates, and the codebook versions judgments are read under.

One rule, the same for ``citeaudit run``, ``backfill``, ``status``, ``citeaudit ui`` / ``make ui``
and the automation: the partitions are the dates the raw folder holds, as ``citeaudit status``
reads them (``layout.discover_dates``), never a calendar. So the UI shows exactly the partitions
``status`` lists: no run of days without data shown "missing" while ``status`` says all is done.

- ``observation_date`` (daily assets: ingest, archive, citations): every date with an
  ``answers/<date>/`` or ``warc/<date>/`` folder (a crawl-only date holds captures the judged
  stages of its neighbours read);
- ``answer_date`` × ``codebook`` (judged assets: alignment to report): every date with an
  ``answers/<date>/`` folder, under every codebook version (``codebooks/<version>.yaml``).

All three are dynamic partitions stored in the Dagster instance; ``register`` adds a raw folder's
dates (``citeaudit run``, ``citeaudit ui`` before the UI starts, the raw-inputs sensor and the
nightly schedule for a new date). No module-level state depends on the environment, so every
process (a test worker, a Celery worker, the UI's code server) defines the same partitions.

Judged assets keep the dimension name ``date``: a judged partition key is still
``<version>|<date>`` and writes ``<asset>/observation_date=<date>/codebook=<version>/``. Dagster
maps a judged partition onto the daily partition of the same key string (identity); the crawl
window a judged stage reads (neighbouring dates) is ``citeaudit status``'s business, which
computes staleness from the files, not from Dagster's lineage.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import dagster as dg

from citeaudit import layout, storage

observation_date = dg.DynamicPartitionsDefinition(name="observation_date")

answer_date = dg.DynamicPartitionsDefinition(name="answer_date")

codebook = dg.DynamicPartitionsDefinition(name="codebook")

date_codebook = dg.MultiPartitionsDefinition({"date": answer_date, "codebook": codebook})


def _add(instance: dg.DagsterInstance, name: str, keys: Iterable[str]) -> list[str]:
    known = set(instance.get_dynamic_partitions(name))
    new = sorted({k for k in keys if k not in known})
    if new:
        instance.add_dynamic_partitions(name, new)
    return new


def register(
    instance: dg.DagsterInstance,
    *,
    dates: Iterable[str] = (),
    answer_dates: Iterable[str] = (),
    versions: Iterable[str] = (),
) -> dict[str, list[str]]:
    """Add dates and codebook versions not yet known to the instance's dynamic partitions; an
    answer date is a date too. Return the keys added, by partition name."""
    answer_dates = list(answer_dates)
    return {
        observation_date.name: _add(instance, observation_date.name, [*dates, *answer_dates]),
        answer_date.name: _add(instance, answer_date.name, answer_dates),
        codebook.name: _add(instance, codebook.name, versions),
    }


def data_dates(raw: Path) -> tuple[list[str], list[str]]:
    """The raw folder's dates (answers/ or warc/ folders) and its answer dates."""
    root = storage.path(raw)
    if not root.is_dir():
        return [], []
    return layout.discover_dates(root)[0], layout.answer_dates(root)


def sync_dates(instance: dg.DagsterInstance, raw: Path, derived: Path | None = None
               ) -> dict[str, list[str]]:
    """Make the date partitions the raw folder's dates: add the missing ones and remove a
    registered date the raw folder does not hold and ``derived`` has no output of (one left by
    another raw folder, or by a date a re-import emptied and the next run cleared). A date with
    outputs but no raw folder stays: ``citeaudit status`` lists it as stale, so the UI shows
    it too. Return the keys added (``+name``) and removed (``-name``)."""
    dates, answers = data_dates(raw)
    added = register(instance, dates=dates, answer_dates=answers)
    removed: dict[str, list[str]] = {}
    for name, keep in ((observation_date.name, set(dates)), (answer_date.name, set(answers))):
        gone = [d for d in instance.get_dynamic_partitions(name)
                if d not in keep and not has_outputs(derived, d)]
        for d in gone:
            instance.delete_dynamic_partition(name, d)
        removed[name] = gone
    return {**{f"+{k}": v for k, v in added.items()}, **{f"-{k}": v for k, v in removed.items()}}


# The hive keys of a date's folders under an asset: observation_date=, or crawl_date= for the
# capture index of a crawl date.
DATE_KEYS = ("observation_date", "crawl_date")


def date_folders(derived: Path, date: str | None = None) -> list[Path]:
    """Every ``<asset>/<observation_date|crawl_date>=<date>/`` folder of a local ``derived``
    (of any date when ``date`` is None)."""
    if storage.is_remote(derived) or not Path(derived).is_dir():
        return []
    return sorted(p for key in DATE_KEYS for p in Path(derived).glob(f"*/{key}={date or '*'}")
                  if p.is_dir())


def has_outputs(derived: Path | None, date: str) -> bool:
    """Whether any asset folder of ``derived`` holds a partition of ``date``."""
    return derived is not None and bool(date_folders(derived, date))


def judged_partition(partition_key: str | dg.MultiPartitionKey) -> dict[str, str]:
    """The hive folders of a date × codebook partition: observation_date=…/codebook=….

    Every judged asset writes ``<asset>/observation_date=<date>/codebook=<version>/``, so a
    backfill of one codebook can only replace that codebook's files.
    """
    keys = (
        partition_key.keys_by_dimension
        if isinstance(partition_key, dg.MultiPartitionKey)
        else dict(zip(("codebook", "date"), str(partition_key).split("|"), strict=True))
    )
    return {"observation_date": keys["date"], "codebook": keys["codebook"]}


def judged_key(date: str, version: str) -> dg.MultiPartitionKey:
    """The date × codebook partition key of one observation date under one codebook."""
    return dg.MultiPartitionKey({"date": date, "codebook": version})


# The partition-membership questions Dagster asks an instance while it executes steps; each is
# one SQLite query (a new connection) on the default instance, and a run asks the same few
# questions hundreds of times (for every input of every step).
_MEMBERSHIP = ("has_dynamic_partition", "get_dynamic_partitions", "get_existing_dynamic_partitions")


@contextmanager
def remembered(instance: dg.DagsterInstance) -> Iterator[dg.DagsterInstance]:
    """Within the block, ``instance`` answers Dagster's partition-membership questions from
    memory after asking its storage once each: the dates and codebook versions are registered
    before the runs start and no step adds or removes one, so the answers cannot change under
    the runs (another process only ever adds keys, or removes a date with no raw folder, which
    no run of this process executes). A 10-answer ``citeaudit run``: 0.89x the wall.

    The instance object itself answers (its methods are shadowed on the object for the block,
    then restored), as Dagster's steps ask the instance they were given."""
    asked = {name: getattr(instance, name) for name in _MEMBERSHIP}
    keys: dict[str, list[str]] = {}
    member: dict[tuple[str, str], bool] = {}

    def get_dynamic_partitions(partitions_def_name: str) -> list[str]:
        if partitions_def_name not in keys:
            keys[partitions_def_name] = list(asked["get_dynamic_partitions"](partitions_def_name))
        return list(keys[partitions_def_name])

    def has_dynamic_partition(partitions_def_name: str, partition_key: str) -> bool:
        key = (partitions_def_name, partition_key)
        if key not in member:
            member[key] = asked["has_dynamic_partition"](partitions_def_name, partition_key)
        return member[key]

    def get_existing_dynamic_partitions(partitions_def_name: str,
                                        partition_keys: Sequence[str]) -> set[str]:
        return set(get_dynamic_partitions(partitions_def_name)) & set(partition_keys)

    answers = {"has_dynamic_partition": has_dynamic_partition,
               "get_dynamic_partitions": get_dynamic_partitions,
               "get_existing_dynamic_partitions": get_existing_dynamic_partitions}
    vars(instance).update(answers)
    try:
        yield instance
    finally:
        for name in _MEMBERSHIP:
            vars(instance).pop(name, None)
