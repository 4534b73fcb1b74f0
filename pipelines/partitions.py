"""Partitions: daily observation dates, and the codebook versions judgments are read under.

Dates come from the data (``answers/<date>/``, ``warc/<date>/``) and are a daily dimension. It
starts at the first date of the raw folder named by ``CITEAUDIT_RAW`` when that is set (as
``citeaudit ui`` does, so the UI's partitions span the dates the data has, not years of empty
days), else early enough for any real panel (the in-process runs of ``citeaudit run`` accept any
date of any raw folder). Codebook versions are a dynamic dimension registered from
``codebooks/<version>.yaml``; every asset that depends on judgments is partitioned by
date × codebook so a new codebook is backfilled without touching another's outputs.
"""

from __future__ import annotations

import os

import dagster as dg

from citeaudit import layout, storage

EARLIEST = "2020-01-01"


def start_date() -> str:
    """The first date of $CITEAUDIT_RAW's answers/ and warc/ folders, else ``EARLIEST``."""
    raw = os.environ.get("CITEAUDIT_RAW")
    root = storage.path(raw) if raw else None
    dates = layout.discover_dates(root)[0] if root is not None and root.is_dir() else []
    return dates[0] if dates else EARLIEST


START_DATE = start_date()

# end_offset=1 admits today's date: a panel observed today can be audited today.
observation_date = dg.DailyPartitionsDefinition(start_date=START_DATE, end_offset=1)

codebook = dg.DynamicPartitionsDefinition(name="codebook")

date_codebook = dg.MultiPartitionsDefinition({"date": observation_date, "codebook": codebook})


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
