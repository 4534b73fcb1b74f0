"""Partitions: daily observation dates, and the codebook versions judgments are read under.

Dates come from the data (``answers/<date>/``, ``warc/<date>/``) and are a daily dimension that
starts early enough for any real panel. Codebook versions are a dynamic dimension registered from
``codebooks/<version>.yaml``; every asset that depends on judgments is partitioned by
date × codebook so a new codebook is backfilled without touching another's outputs.
"""

from __future__ import annotations

import dagster as dg

START_DATE = "2020-01-01"

# end_offset=1 admits today's date: a panel observed today can be audited today.
observation_date = dg.DailyPartitionsDefinition(start_date=START_DATE, end_offset=1)

codebook = dg.DynamicPartitionsDefinition(name="codebook")

date_codebook = dg.MultiPartitionsDefinition({"date": observation_date, "codebook": codebook})
